import Foundation
import Keyward
import KeywardCrypto
import Sessions
import Store
import Synchronization
import TestWaiting
import XCTest

/// Providers whose allow rules are metered at `{ input = 1, output = 4 }` with an output cap of
/// 1,024 tokens, in front of a fake OpenAI and a fake Anthropic that report 1,200 input and 300
/// output tokens: ⌈(1,200 × 1 + 300 × 4) / 1,000⌉ = ⌈2.4⌉ = 3 credits a call.
enum MeteredProviders {
    static let settled = 3

    static func toml(openAIPort: UInt16, anthropicPort: UInt16, cutPort: UInt16? = nil) -> String {
        func table(_ name: String, port: UInt16, path: String, meter: String, member: String, extra: String = "") -> String {
            """
            [\(name)]
            base_url = "http://127.0.0.1:\(port)"
            allow_http_loopback = true
            secret = "CHAT_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "POST", path = "\(path)", meter = "\(meter)", credits_per_1k_tokens = { input = 1, output = 4 }, json = { max_tokens = 1024, max_tokens_member = "\(member)" } } ]
            \(extra)

            """
        }
        var text = table("openai", port: openAIPort, path: "/v1/chat/completions", meter: "openai", member: "max_completion_tokens")
            + table("anthropic", port: anthropicPort, path: "/v1/messages", meter: "anthropic", member: "max_tokens")
        if let cutPort { text += table("cut", port: cutPort, path: "/v1/chat/completions", meter: "openai", member: "max_tokens") }
        return text
    }

    /// The credits held for a call whose forwarded body has `bytes` bytes: ⌈(bytes + 1,024 × 4) / 1,000⌉.
    static func hold(forwardedBytes bytes: Int) -> Int { (bytes + 4096 + 999) / 1000 }
}

/// Credits metered by the usage the provider reports, on SQLite: the hold, the settle, and a
/// stream cut before its usage.
final class MeteringTests: XCTestCase {
    var env: TestDeployment!
    var openAI: FakeAIProvider!
    var anthropic: FakeAIProvider!
    var cut: RawUpstream?

    override func tearDown() {
        env?.shutdown()
        openAI?.stop()
        anthropic?.stop()
        cut?.stop()
    }

    private func start(installDailyCredits: Int? = 1_000, appDailyCredits: Int? = nil, cutAnswer: String? = nil) throws {
        openAI = FakeAIProvider(.openAI)
        anthropic = FakeAIProvider(.anthropic)
        try openAI.start()
        try anthropic.start()
        if let cutAnswer { cut = try RawUpstream(answer: cutAnswer, closeAfterAnswer: true) }
        var spend = SpendSettings()
        spend.installDailyCredits = installDailyCredits
        spend.appDailyCredits = appDailyCredits
        let (openAIPort, anthropicPort, cutPort) = (openAI.port, anthropic.port, cut?.port)
        env = try TestDeployment(
            extraProviders: { _ in MeteredProviders.toml(openAIPort: openAIPort, anthropicPort: anthropicPort, cutPort: cutPort) },
            settings: { $0.spend = spend })
    }

    private func usedToday(_ token: String) throws -> Int? {
        let response = try env.client.call("GET", "/v1/usage", headers: [env.bearer(token)])
        let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return (json?["daily_credits"] as? [String: Any])?["used"] as? Int
    }

    private func metered(_ outcome: String, _ provider: String) -> Int64 {
        env.deployment.service.metrics.value("keyward_metered_calls_total", ["provider": provider, "outcome": outcome])
    }

    private func post(_ provider: String, _ path: String, _ body: String, token: String) throws -> (status: Int, headers: [(String, String)], body: [UInt8]) {
        try env.client.stream("POST", "/p/\(provider)\(path)", headers: [env.bearer(token), ("Content-Type", "application/json")],
                              body: Array(body.utf8)) { _ in }
    }

    private func header(_ headers: [(String, String)], _ name: String) -> String? {
        headers.first { $0.0.lowercased() == name }?.1
    }

    func testAPlainCallHoldsItsWorstCaseThenSettlesAtTheReportedUsage() throws {
        try start()
        let (_, token) = try env.session()
        for (provider, fake, path) in [("openai", openAI!, "/v1/chat/completions"), ("anthropic", anthropic!, "/v1/messages")] {
            let before = try XCTUnwrap(try usedToday(token))
            let answer = try post(provider, path, #"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#, token: token)
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(answer.body, fake.answers.last, "relayed byte for byte")
            let forwarded = try XCTUnwrap(fake.received.last).body.count
            let hold = MeteredProviders.hold(forwardedBytes: forwarded)
            XCTAssertEqual(hold, 5)
            // The answer's head went out while the hold stood.
            XCTAssertEqual(header(answer.headers, "x-ratelimit-remaining"), String(1_000 - before - hold))
            XCTAssertTrue(waitUntil { self.metered("settled", provider) == 1 }, "\(provider) never settled")
            XCTAssertTrue(waitUntil { (try? self.usedToday(token)) == before + MeteredProviders.settled },
                          "\(provider): used \(String(describing: try? usedToday(token))), expected \(before + MeteredProviders.settled)")
        }
        let lines = env.logLines.filter { $0.contains("\"route\":\"proxy\"") }
        XCTAssertEqual(lines.count, 2)
        for line in lines {
            XCTAssertTrue(line.contains("\"input_tokens\":1200"), line)
            XCTAssertTrue(line.contains("\"output_tokens\":300"), line)
        }
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_metered_tokens_total", ["provider": "openai", "kind": "output"]), 300)
    }

    func testUsageShowsTheSettledFigureWhileTheGiveBackStillWaits() throws {
        try start()
        let (_, token) = try env.session()
        let body = #"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#
        XCTAssertEqual(try post("openai", "/v1/chat/completions", body, token: token).status, 200)
        XCTAssertTrue(waitUntil { self.metered("settled", "openai") == 1 })
        // No wait for the flush timer: the read gives the waiting credits back first.
        XCTAssertEqual(try usedToday(token), MeteredProviders.settled)
        let day = SpendSettings.day(ofSeconds: env.deployment.time.nowSeconds())
        let device = try XCTUnwrap(env.deployment.store.creditUsage(day: day, limit: 1).first)
        XCTAssertEqual(device.used, MeteredProviders.settled, "the store holds the settled figure once read")
    }

    func testAStopGivesBackWhatStillWaits() throws {
        try start()
        let (_, token) = try env.session()
        let body = #"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#
        XCTAssertEqual(try post("openai", "/v1/chat/completions", body, token: token).status, 200)
        XCTAssertTrue(waitUntil { self.metered("settled", "openai") == 1 })
        env.deployment.server.stop()
        let day = SpendSettings.day(ofSeconds: env.deployment.time.nowSeconds())
        XCTAssertEqual(try env.deployment.store.creditUsage(day: day, limit: 1).first?.used, MeteredProviders.settled)
    }

    func testACallThatFitsOnlyOnceTheLastGiveBackIsInIsAdmitted() throws {
        // The budget fits one hold plus one settled call: the second call fits only when the
        // first one's unused hold is back, whether the timer flushed it or the refusal did.
        let forwarded = #"{"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":1024}"#.utf8.count
        let hold = MeteredProviders.hold(forwardedBytes: forwarded)
        try start(installDailyCredits: hold + MeteredProviders.settled)
        let (_, token) = try env.session()
        let body = #"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#
        XCTAssertEqual(try post("openai", "/v1/chat/completions", body, token: token).status, 200)
        XCTAssertEqual(try XCTUnwrap(openAI.received.last).body.count, forwarded)
        XCTAssertTrue(waitUntil { self.metered("settled", "openai") == 1 })
        let second = try post("openai", "/v1/chat/completions", body, token: token)
        XCTAssertEqual(second.status, 200)
        XCTAssertEqual(header(second.headers, "x-ratelimit-remaining"), "0", "the settled figure plus the new hold")
        XCTAssertTrue(waitUntil { self.metered("settled", "openai") == 2 })
        XCTAssertEqual(try usedToday(token), 2 * MeteredProviders.settled)
    }

    func testAMeteredCallAsksForAnUncompressedAnswerWhateverTheClientAccepts() throws {
        // Phones' HTTP stacks send Accept-Encoding: gzip; a compressed answer would hide its usage
        // from the scanner and keep the whole hold.
        try start()
        let (_, token) = try env.session()
        let before = try XCTUnwrap(try usedToday(token))
        let answer = try env.client.stream(
            "POST", "/p/openai/v1/chat/completions",
            headers: [env.bearer(token), ("Content-Type", "application/json"), ("Accept-Encoding", "gzip, br"), ("accept-encoding", "zstd")],
            body: Array(#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#.utf8)) { _ in }
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(try XCTUnwrap(openAI.received.last).acceptEncoding, ["identity"])
        XCTAssertTrue(waitUntil { (try? self.usedToday(token)) == before + MeteredProviders.settled })
    }

    func testAStreamedCallSettlesFromItsLastChunk() throws {
        try start()
        let (_, token) = try env.session()
        // OpenAI reports a stream's usage only when asked: Keyward asks for it.
        let openAIAnswer = try post("openai", "/v1/chat/completions", #"{"model":"m","stream":true,"messages":[]}"#, token: token)
        XCTAssertEqual(openAIAnswer.status, 200)
        XCTAssertEqual(String(decoding: try XCTUnwrap(openAI.received.last).body, as: UTF8.self),
                       #"{"model":"m","stream":true,"messages":[],"max_completion_tokens":1024,"stream_options":{"include_usage":true}}"#)
        XCTAssertEqual(openAIAnswer.body, openAI.answers.last)
        XCTAssertTrue(String(decoding: openAIAnswer.body, as: UTF8.self).contains("\"usage\":{\"prompt_tokens\":1200"))
        XCTAssertTrue(waitUntil { self.metered("settled", "openai") == 1 })
        XCTAssertTrue(waitUntil { (try? self.usedToday(token)) == MeteredProviders.settled })

        let anthropicAnswer = try post("anthropic", "/v1/messages", #"{"model":"m","stream":true,"messages":[]}"#, token: token)
        XCTAssertEqual(anthropicAnswer.status, 200)
        XCTAssertEqual(anthropicAnswer.body, anthropic.answers.last)
        XCTAssertTrue(waitUntil { self.metered("settled", "anthropic") == 1 })
        XCTAssertTrue(waitUntil { (try? self.usedToday(token)) == 2 * MeteredProviders.settled })
    }

    func testAStreamCutBeforeItsUsageSettlesAtTheHold() throws {
        let firstEvent = #"data: {"choices":[{"delta":{"content":"Hel"}}]}"# + "\n\n"
        let chunk = String(firstEvent.utf8.count, radix: 16) + "\r\n" + firstEvent + "\r\n"
        try start(cutAnswer: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk)
        let (_, token) = try env.session()
        let body = #"{"model":"m","stream":true,"messages":[]}"#
        // Forwarded: the body with the cap and the usage request added.
        let forwarded = body.utf8.count + #","max_tokens":1024,"stream_options":{"include_usage":true}"#.utf8.count
        _ = try? post("cut", "/v1/chat/completions", body, token: token)
        XCTAssertTrue(waitUntil { self.metered("no_usage", "cut") == 1 }, "the cut stream was not counted")
        XCTAssertEqual(metered("settled", "cut"), 0)
        XCTAssertEqual(try usedToday(token), MeteredProviders.hold(forwardedBytes: forwarded))
    }

    /// Events of a metered stream reach the client as they are written: the first long before the
    /// second (written 500 ms later), as on the same provider unmetered, in the same run.
    func testAMeteredStreamStillRelaysEachEventAsItIsWritten() throws {
        var spend = SpendSettings()
        spend.installDailyCredits = 1_000
        env = try TestDeployment(extraProviders: { port in
            """
            [metered]
            base_url = "http://127.0.0.1:\(port)"
            allow_http_loopback = true
            secret = "CHAT_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "POST", path = "/v1/chat/completions", meter = "openai", credits_per_1k_tokens = { input = 1, output = 4 }, json = { max_tokens = 64 } } ]

            """
        }, eventCount: 2, eventGapMillis: 500, settings: { $0.spend = spend })
        let (_, token) = try env.session()
        var firstEventMillis: [String: Double] = [:]
        for provider in ["chat", "metered"] {
            let start = DispatchTime.now()
            let arrivals = Mutex<[(String, Double)]>([])
            let result = try env.client.stream(
                "POST", "/p/\(provider)/v1/chat/completions", headers: [env.bearer(token)], body: Array(#"{"stream":true}"#.utf8)
            ) { chunk in
                let at = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
                for event in String(decoding: chunk, as: UTF8.self).split(separator: "\n") {
                    arrivals.withLock { $0.append((String(event), at)) }
                }
            }
            XCTAssertEqual(result.status, 200)
            let events = arrivals.withLock { $0 }
            XCTAssertEqual(events.map(\.0), ["data: 1", "data: 2", "data: [DONE]"], provider)
            XCTAssertGreaterThan(events[1].1 - events[0].1, 350, "\(provider): event 1 was held back until event 2")
            firstEventMillis[provider] = events[0].1
        }
        print(String(format: "first event after %.1f ms unmetered, %.1f ms metered", firstEventMillis["chat"] ?? 0, firstEventMillis["metered"] ?? 0))
        // The fake's events carry no usage: the hold stands and the call is counted.
        XCTAssertTrue(waitUntil { self.metered("no_usage", "metered") == 1 })
    }

    func testTwoHundredConcurrentMeteredCallsFromFiveDevicesNeverPassTheCeiling() throws {
        try start(installDailyCredits: nil, appDailyCredits: 100)
        let tokens = try (0..<5).map { _ in try env.session().1 }
        let statuses = ConcurrentResults<Int>()
        let shared = try XCTUnwrap(env)
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            let response = try? shared.client.call(
                "POST", "/p/openai/v1/chat/completions", headers: [shared.bearer(tokens[index % 5])],
                body: Array(#"{"model":"m","messages":[]}"#.utf8))
            statuses.append(response?.status ?? -1)
        }
        let served = statuses.values.filter { $0 == 200 }.count
        print("metering burst (SQLite): \(served) of 200 served at the ceiling of 100; statuses \(Dictionary(grouping: statuses.values, by: { $0 }).mapValues(\.count))")
        // Each call holds 5 and settles at 3: at least 100 / 5 fit, and 200 × 3 do not.
        XCTAssertGreaterThanOrEqual(served, 20)
        XCTAssertGreaterThan(statuses.values.filter { $0 == 429 }.count, 0)
        let forwarded = try XCTUnwrap(openAI.received.first).body.count
        let store = env.deployment.store
        let day = SpendSettings.day(ofSeconds: env.deployment.time.nowSeconds())
        // Every call the provider received ends settled or, when its client gave up on the
        // answer (a loaded machine), keeps its hold: the app's credits are exactly those.
        XCTAssertTrue(waitUntil { self.metered("settled", "openai") + self.metered("no_usage", "openai") == Int64(self.openAI.received.count) })
        let settled = Int(metered("settled", "openai")), kept = Int(metered("no_usage", "openai"))
        XCTAssertGreaterThanOrEqual(settled, served)
        let hold = MeteredProviders.hold(forwardedBytes: forwarded)
        XCTAssertTrue(waitUntil { (try? store.creditsUsed(scope: CreditSpend.appScope, day: day)) == settled * MeteredProviders.settled + kept * hold })
        XCTAssertLessThanOrEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 100)
    }
}

/// The same ceiling across two instances sharing one PostgreSQL: holds and settles are each one
/// conditional statement, so the app's credits never pass the ceiling and end at the settled sum.
final class PostgresMeteringTests: XCTestCase {
    private var server: PostgresServer?
    private var instances: [TestDeployment] = []
    private var openAI: FakeAIProvider?

    override func tearDown() {
        instances.forEach { $0.shutdown() }
        openAI?.stop()
        server?.stop()
    }

    func testTwoHundredConcurrentMeteredCallsAcrossTwoInstancesNeverPassTheCeiling() throws {
        let server = try PostgresServer()
        self.server = server
        let url = try server.createDatabase("keyward_metering")
        let fake = FakeAIProvider(.openAI)
        openAI = fake
        try fake.start()
        var spend = SpendSettings()
        spend.appDailyCredits = 100
        let key = try ECPrivateKey.generate(.p256)
        let keys = try SessionKeySet(active: (kid: SessionKeySet.thumbprintKID(for: key.publicKey), key: key), verifyOnly: [])
        let providers: (UInt16) -> String = { _ in MeteredProviders.toml(openAIPort: fake.port, anthropicPort: fake.port) }
        let first = try TestDeployment(extraProviders: providers, settings: { $0.spend = spend }, store: url, sessionKeys: { keys })
        instances.append(first)
        let second = try TestDeployment(extraProviders: providers, settings: { $0.spend = spend }, store: url, sessionKeys: { keys },
                                        anchor: first.deployment.anchor)
        instances.append(second)
        let tokens = try (0..<5).map { index in try (index % 2 == 0 ? first : second).session().1 }

        let statuses = Mutex<[Int]>([])
        let next = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<50 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while true {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    guard index < 200 else { return }
                    let instance = index % 2 == 0 ? first : second
                    let response = try? instance.client.call(
                        "POST", "/p/openai/v1/chat/completions", headers: [instance.bearer(tokens[index % 5])],
                        body: Array(#"{"model":"m","messages":[]}"#.utf8))
                    statuses.withLock { $0.append(response?.status ?? -1) }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "the burst did not finish")
        let all = statuses.withLock { $0 }
        let served = all.filter { $0 == 200 }.count
        print("metering burst (PostgreSQL, two instances): \(served) of 200 served at the ceiling of 100; statuses \(Dictionary(grouping: all, by: { $0 }).mapValues(\.count))")
        XCTAssertGreaterThanOrEqual(served, 20)
        XCTAssertGreaterThan(all.filter { $0 == 429 }.count, 0)
        let count = { [first, second] (outcome: String) -> Int in
            Int([first, second].map { $0.deployment.service.metrics.value("keyward_metered_calls_total", ["provider": "openai", "outcome": outcome]) }
                .reduce(0, +))
        }
        // Every call the provider received ends settled or, when its client gave up on the answer
        // (a loaded machine), keeps its hold: the app's credits are exactly those.
        XCTAssertTrue(waitUntil(timeout: 30) { count("settled") + count("no_usage") == fake.received.count })
        let (settled, kept) = (count("settled"), count("no_usage"))
        XCTAssertGreaterThanOrEqual(settled, served)
        let hold = MeteredProviders.hold(forwardedBytes: try XCTUnwrap(fake.received.first).body.count)
        XCTAssertGreaterThan(first.deployment.service.metrics.value("keyward_metered_calls_total", ["provider": "openai", "outcome": "settled"]), 0)
        XCTAssertGreaterThan(second.deployment.service.metrics.value("keyward_metered_calls_total", ["provider": "openai", "outcome": "settled"]), 0)
        let day = SpendSettings.day(ofSeconds: first.deployment.time.nowSeconds())
        let store = first.deployment.store
        XCTAssertTrue(waitUntil { (try? store.creditsUsed(scope: CreditSpend.appScope, day: day)) == settled * MeteredProviders.settled + kept * hold })
        XCTAssertLessThanOrEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 100)
    }
}
