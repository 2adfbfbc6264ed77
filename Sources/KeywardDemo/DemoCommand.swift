import DeviceSimulator
import Foundation
import Keyward
import KeywardCrypto
import Synchronization

/// `keyward-demo` (also reached as `keyward demo`): the whole story on 127.0.0.1 in one process, each step printed with its timing.
///
/// A temporary SQLite store, a generated session key, a test App Attest trust anchor with a
/// simulated iPhone, and a local fake provider that streams server-sent events. Exit code 0 when
/// every step behaved as it should, 1 otherwise, 2 on a usage error.
public enum DemoCommand {
    static let usage = """
        usage: keyward demo [--keep-running]

        Runs Keyward end to end on 127.0.0.1 with a simulated iPhone and a local fake provider:
        challenge, attest, session, assert, a streamed proxied call, a refused path, a rate-limited
        call, the usage endpoint, a daily-budget refusal, a revoked device; then an Android install
        (Play Integrity through a local fake Google) and one refresh of its session that makes no
        call to Google. --keep-running then leaves the server up and prints a session token and a
        curl command to try (Ctrl-C stops it).

        exit codes: 0 every step passed, 1 a step failed, 2 usage error
        """

    /// Runs the demo with `arguments` (after the program name) and returns the exit code: 0 every
    /// step passed, 1 a step failed or the demo could not start, 2 usage error.
    public static func run(_ arguments: [String]) -> Int32 {
        let options: CommandLineOptions
        do {
            options = try CommandLineOptions(arguments, valueFlags: [], switchFlags: ["keep-running", "help"])
        } catch {
            FileHandle.standardError.write(Data("keyward demo: \(error)\n\n\(usage)\n".utf8))
            return 2
        }
        if options.has("help") {
            print(usage)
            return 0
        }
        do {
            let demo = try DemoRun()
            defer { demo.shutdown() }
            let passed = demo.runSteps()
            guard passed else { return 1 }
            if options.has("keep-running") { try demo.keepRunning() }
            return 0
        } catch {
            FileHandle.standardError.write(Data("keyward demo: could not start: \(error)\n".utf8))
            return 1
        }
    }
}

/// One run of the demo story.
final class DemoRun {
    let provider: FakeProvider
    let android: DemoAndroid
    let deployment: LocalDeployment
    let client: DemoClient
    let startedAt = DispatchTime.now()
    var failures = 0
    var stepNumber = 0

    static let providerKeyName = "DEMO_PROVIDER_KEY"
    /// The demo device's daily credit budget.
    static let dailyCredits = 10

    init() throws {
        let providerKey = "demo-" + Hex.encode(SecureRandom.bytes(12))
        provider = FakeProvider(expectedAuthorization: "Bearer " + providerKey, eventCount: 3, eventGapMillis: 300)
        try provider.start()
        let time = SystemTimeSource()
        let android = try DemoAndroid(now: time.nowSeconds())
        self.android = android
        deployment = try LocalDeployment(
            providersTOML: DemoRun.providersTOML(port: provider.port),
            secrets: [DemoRun.providerKeyName: providerKey],
            settings: { settings in
                settings.revocationCheckSeconds = 0
                var spend = SpendSettings()
                spend.installDailyCredits = DemoRun.dailyCredits
                settings.spend = spend
            },
            time: time,
            android: { try android.handshake(upstream: $0) })
        client = DemoClient(baseURL: deployment.baseURL, client: deployment.upstream)
        print("Keyward demo: proxy on \(deployment.baseURL), admin on \(deployment.adminURL), fake provider on 127.0.0.1:\(provider.port)")
        print("(temporary SQLite store in \(deployment.directory); the provider key exists only inside Keyward)\n")
    }

    static func providersTOML(port: UInt16) -> String {
        """
        # The demo's one provider: a local fake that streams server-sent events.
        [demo]
        base_url = "http://127.0.0.1:\(port)"
        allow_http_loopback = true
        secret = "\(providerKeyName)"
        auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
        allow = [
          { method = "POST", path = "/v1/chat/completions" },
          { method = "GET", path = "/v1/models" },
        ]
        rate_limit = { per_minute = 4 }

        # The same fake as a costly endpoint: 5 credits a call, against the device's 10 a day.
        [costly]
        base_url = "http://127.0.0.1:\(port)"
        allow_http_loopback = true
        secret = "\(providerKeyName)"
        auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
        allow = [ { method = "GET", path = "/v1/models", cost = 5 } ]
        """
    }

    func shutdown() {
        deployment.shutdown()
        android.stop()
        provider.stop()
    }

    /// Runs every step; true when all passed.
    func runSteps() -> Bool {
        let device: SimulatedAppleDevice
        do { device = try deployment.makeDevice() } catch {
            print("could not make a simulated device: \(error)")
            return false
        }
        let keyID = Base64.encode(device.keyID)
        var token = ""

        step("challenge", "POST /v1/challenge") {
            let (response, json) = try client.postJSON("/v1/challenge", [:])
            try expect(response.status == 200 && json["challenge"] is String, "got \(response.status)")
            return "200, 32 random bytes, single use"
        }
        step("attest", "POST /v1/attest/ios") {
            let challenge = try freshChallenge()
            let attestation = try device.attestation(clientDataHash: SHA256.hash(challenge), at: deployment.time.nowSeconds())
            let (response, json) = try client.postJSON(
                "/v1/attest/ios",
                ["key_id": keyID, "attestation": Base64.encode(attestation), "challenge": Base64.encodeURL(challenge)])
            try expect(response.status == 200, "got \(response.status) \(json["error"] ?? "")")
            token = json["token"] as? String ?? ""
            return "200, App Attest chain verified, device \(Hex.encode(device.keyID).prefix(12))… registered, session issued"
        }
        step("assert", "POST /v1/assert/ios") {
            let challenge = try freshChallenge()
            let assertion = try device.assertion(clientDataHash: SHA256.hash(challenge))
            let (response, json) = try client.postJSON(
                "/v1/assert/ios",
                ["key_id": keyID, "assertion": Base64.encode(assertion), "challenge": Base64.encodeURL(challenge)])
            try expect(response.status == 200, "got \(response.status) \(json["error"] ?? "")")
            token = json["token"] as? String ?? token
            return "200, signature and counter checked, fresh session (ES256, expires in 1 h)"
        }
        step("streamed call", "POST /p/demo/v1/chat/completions") {
            let callStart = DispatchTime.now()
            let arrivals = Mutex<[(String, Double)]>([])
            let result = try client.stream(
                "POST", "/p/demo/v1/chat/completions",
                headers: [("Authorization", "Bearer " + token), ("Content-Type", "application/json"), ("Cookie", "session=client")],
                body: Array("{\"model\":\"demo\",\"stream\":true}".utf8)
            ) { chunk in
                let at = Double(DispatchTime.now().uptimeNanoseconds - callStart.uptimeNanoseconds) / 1e6
                let text = String(decoding: chunk, as: UTF8.self)
                for event in text.split(separator: "\n", omittingEmptySubsequences: true) {
                    arrivals.withLock { $0.append((String(event), at)) }
                    print(String(format: "        %@ arrived at +%.0f ms", String(event), at))
                }
            }
            let events = arrivals.withLock { $0 }
            try expect(result.status == 200, "got \(result.status)")
            try expect(events.map(\.0) == ["data: 1", "data: 2", "data: 3", "data: [DONE]"], "events \(events.map(\.0))")
            try expect(events[1].1 - events[0].1 > 150, "events did not arrive separately")
            try expect(!result.headers.contains { $0.0.lowercased() == "set-cookie" }, "Set-Cookie was passed through")
            return "200, 4 events streamed as they were written; key injected, client cookie stripped"
        }
        step("refused path", "GET /p/demo/v1/%2e%2e/secrets") {
            let before = provider.received.count
            let response = try client.call("GET", "/p/demo/v1/%2e%2e/secrets", headers: [("Authorization", "Bearer " + token)])
            try expect(response.status == 400, "got \(response.status)")
            try expect(provider.received.count == before, "the provider was called")
            return "400 bad_request, nothing sent upstream"
        }
        step("rate limit", "GET /p/demo/v1/models × 4 more (limit 4/min, step 4 spent one)") {
            var statuses: [Int] = []
            var retryAfter = ""
            for _ in 0..<4 {
                let response = try client.call("GET", "/p/demo/v1/models", headers: [("Authorization", "Bearer " + token)])
                statuses.append(response.status)
                if response.status == 429 { retryAfter = response.header("retry-after") ?? "" }
            }
            try expect(statuses == [200, 200, 200, 429], "statuses \(statuses)")
            return "200 200 200 then 429 rate_limited, Retry-After: \(retryAfter) s"
        }
        step("usage", "GET /v1/usage") {
            let response = try client.call("GET", "/v1/usage", headers: [("Authorization", "Bearer " + token)])
            let json = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
            let credits = json["daily_credits"] as? [String: Any] ?? [:]
            try expect(response.status == 200, "got \(response.status)")
            try expect(credits["used"] as? Int == 4 && credits["remaining"] as? Int == 6, "credits \(credits)")
            return "200, tier \(json["tier"] ?? "-"): 4 of \(DemoRun.dailyCredits) credits used today, 6 left, resets \(credits["resets_at"] ?? "-")"
        }
        step("daily budget", "GET /p/costly/v1/models × 2 (5 credits each, 6 left)") {
            let first = try client.call("GET", "/p/costly/v1/models", headers: [("Authorization", "Bearer " + token)])
            let second = try client.call("GET", "/p/costly/v1/models", headers: [("Authorization", "Bearer " + token)])
            let code = (try? JSONSerialization.jsonObject(with: Data(second.body)) as? [String: Any])?["error"] as? String
            try expect(first.status == 200 && second.status == 429 && code == "install_budget_exhausted",
                       "got \(first.status), \(second.status) \(code ?? "")")
            return "200 (X-RateLimit-Remaining: \(first.header("x-ratelimit-remaining") ?? "-")) then 429 install_budget_exhausted, "
                + "Retry-After: \(second.header("retry-after") ?? "") s (the next UTC midnight)"
        }
        step("revoked device", "GET /p/demo/v1/models after revocation") {
            _ = try deployment.store.setRevoked(deviceID: Hex.encode(device.keyID), true, now: deployment.time.nowSeconds())
            let response = try client.call("GET", "/p/demo/v1/models", headers: [("Authorization", "Bearer " + token)])
            try expect(response.status == 401, "got \(response.status)")
            return "401 session_invalid: the session dies with its device"
        }
        var credential = ""
        step("android attest", "POST /v1/attest/android") {
            let challenge = try freshChallenge()
            let installID = UUID().uuidString.lowercased()
            let integrityToken = android.integrityToken(challenge: challenge, installID: installID, nowMillis: deployment.time.nowMillis())
            let (response, json) = try client.postJSON(
                "/v1/attest/android",
                ["integrity_token": integrityToken, "challenge": Base64.encodeURL(challenge), "install_id": installID])
            try expect(response.status == 200, "got \(response.status) \(json["error"] ?? "")")
            credential = json["install_credential"] as? String ?? ""
            try expect(!credential.isEmpty, "no install_credential in the answer")
            return "200, verdict decoded by (fake) Google: session + install credential (Google decodes: \(android.google.decodeCount))"
        }
        step("android refresh", "POST /v1/refresh") {
            let decodes = android.google.decodeCount
            let (response, json) = try client.postJSON("/v1/refresh", ["install_credential": credential])
            try expect(response.status == 200, "got \(response.status) \(json["error"] ?? "")")
            let next = json["install_credential"] as? String ?? ""
            try expect(!next.isEmpty && next != credential, "the credential did not rotate")
            let session = json["token"] as? String ?? ""
            let call = try client.call("GET", "/p/demo/v1/models", headers: [("Authorization", "Bearer " + session)])
            try expect(call.status == 200, "the refreshed session got \(call.status)")
            try expect(android.google.decodeCount == decodes, "Google was called")
            return "200, new session and rotated credential, no call to Google (decodes still \(decodes)); the session works"
        }
        let total = String(format: "%.0f", elapsedMillis(since: startedAt))
        if failures == 0 {
            print("\nAll \(stepNumber) steps passed in \(total) ms.")
        } else {
            print("\n\(failures) of \(stepNumber) steps FAILED.")
        }
        return failures == 0
    }

    /// Leaves the server up with a fresh device's session and prints how to call it.
    func keepRunning() throws {
        let device = try deployment.makeDevice()
        let challenge = try freshChallenge()
        let attestation = try device.attestation(clientDataHash: SHA256.hash(challenge), at: deployment.time.nowSeconds())
        let (_, json) = try client.postJSON(
            "/v1/attest/ios",
            ["key_id": Base64.encode(device.keyID), "attestation": Base64.encode(attestation), "challenge": Base64.encodeURL(challenge)])
        let token = json["token"] as? String ?? ""
        print("""

            Server left running (Ctrl-C to stop). A session for a fresh simulated device:

              TOKEN=\(token)
              curl -N -X POST \(deployment.baseURL)/p/demo/v1/chat/completions \\
                   -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"stream":true}'

            Metrics: curl \(deployment.adminURL)/metrics   (the demo provider allows 4 calls a minute)
            """)
        deployment.server.runUntilTerminated()
    }

    // MARK: helpers

    struct StepFailure: Error, CustomStringConvertible {
        let description: String
    }

    func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw StepFailure(description: message()) }
    }

    func freshChallenge() throws -> [UInt8] {
        let (response, json) = try client.postJSON("/v1/challenge", [:])
        guard response.status == 200, let text = json["challenge"] as? String, let bytes = Base64.decode(text) else {
            throw StepFailure(description: "challenge request failed with \(response.status)")
        }
        return bytes
    }

    func step(_ name: String, _ request: String, _ body: () throws -> String) {
        stepNumber += 1
        let start = DispatchTime.now()
        // Numbered from 1 with the number right-aligned, so names line up past step 9 and stay whole.
        let label = (stepNumber < 10 ? " " : "") + "\(stepNumber). \(name)"
        let header = label.padding(toLength: max(19, label.count), withPad: " ", startingAt: 0)
        do {
            let detail = try body()
            let millis = String(format: "%7.1f ms", elapsedMillis(since: start))
            print("  ok   \(header) \(millis)  \(request)\n                                  \(detail)")
        } catch {
            failures += 1
            let millis = String(format: "%7.1f ms", elapsedMillis(since: start))
            print("  FAIL \(header) \(millis)  \(request)\n                                  \(error)")
        }
    }

    func elapsedMillis(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
    }
}
