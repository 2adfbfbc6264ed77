import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import Upstream
import XCTest

/// SIGTERM as a rolling restart needs it: `/readyz` 503 at once while both listeners keep serving
/// for `readiness_grace_seconds`, then new connections refused while open streams drain for up to
/// `drain_seconds`.
final class RollingRestartTests: XCTestCase {
    func testSIGTERMTurnsReadinessOffThenRefusesNewConnectionsWhileAStreamFinishes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // The provider streams 10 events 400 ms apart: a 4 s stream, longer than the 2 s grace,
        // well inside drain_seconds = 30 (smaller than production numbers to keep the suite short;
        // both are settings, so the mechanism is the same).
        let upstream = FakeProvider(expectedAuthorization: "Bearer up-key", eventCount: 10, eventGapMillis: 400)
        try upstream.start()
        defer { upstream.stop() }
        _ = try folder.write("providers.toml", TestDeployment.loopbackProvider(
            "chat", port: upstream.port, allow: [("POST", "/v1/chat/completions"), ("GET", "/v1/models")]))
        let environment = ["KEYWARD_SESSION_KEY": CommandLineTests.sessionKeyPEM, "CHAT_KEY": "up-key"]
        let serve = try ServeProcess(
            folder: folder, storePath: folder.path + "/keyward.db",
            extraTOML: "[shutdown]\nreadiness_grace_seconds = 2\ndrain_seconds = 30", environment: environment)
        defer { serve.stop() }
        XCTAssertTrue(serve.waitFor("started"), serve.lines.joined(separator: "\n"))
        let minted = try KeywardBinary.run(
            ["sessions", "mint", "--config", serve.configPath, "--device", "restart-1", "--register", "--token-only"], environment: environment)
        XCTAssertEqual(minted.status, 0, minted.stderr)
        let bearer = ("Authorization", "Bearer " + minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let client = DemoClient(baseURL: "http://127.0.0.1:\(serve.port)", client: sharedClient)
        let admin = DemoClient(baseURL: "http://127.0.0.1:\(serve.adminPort)", client: sharedClient)
        XCTAssertEqual(try admin.call("GET", "/readyz").status, 200)

        // A stream that starts before the signal.
        let firstEvent = DispatchSemaphore(value: 0)
        let streamResult = ConcurrentResults<(status: Int, body: String)>()
        let streamDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let once = ConcurrentResults<Bool>()
            let result = try? client.stream("POST", "/p/chat/v1/chat/completions", headers: [bearer], body: Array("{}".utf8)) { _ in
                if once.values.isEmpty { once.append(true); firstEvent.signal() }
            }
            streamResult.append((result?.status ?? 0, String(decoding: result?.body ?? [], as: UTF8.self)))
            streamDone.signal()
        }
        XCTAssertEqual(firstEvent.wait(timeout: .now() + 10), .success, "the stream did not start")

        let signalled = Date()
        serve.signal(SIGTERM)
        // Readiness goes at once: polled until 503, with a deadline.
        var readyStatus = 0
        while Date().timeIntervalSince(signalled) < 5 {
            readyStatus = (try? admin.call("GET", "/readyz").status) ?? 0
            if readyStatus == 503 { break }
        }
        let readinessMillis = Int(Date().timeIntervalSince(signalled) * 1000)
        XCTAssertEqual(readyStatus, 503)
        print("readyz 503 \(readinessMillis) ms after SIGTERM")
        XCTAssertLessThan(readinessMillis, 1_000, "/readyz must turn 503 at once, not after the grace period")
        // Still the grace period: proxied requests on new connections are answered.
        XCTAssertEqual(try client.call("GET", "/p/chat/v1/models", headers: [bearer]).status, 200)
        XCTAssertEqual(try client.call("POST", "/v1/challenge").status, 200)
        XCTAssertTrue(serve.events("draining").isEmpty, "the checks above must fall inside the grace period")

        // Grace over: new connections are refused while the stream goes on.
        XCTAssertTrue(serve.waitFor("draining", seconds: 10))
        // The listeners are shut right after that line: wait for it (with a deadline).
        let drainSeen = Date()
        var refused = false
        while !refused && Date().timeIntervalSince(drainSeen) < 5 {
            refused = connectionRefused(port: serve.port)
        }
        XCTAssertTrue(refused, "a new connection during the drain must be refused")
        XCTAssertEqual(streamDone.wait(timeout: .now()), .timedOut, "the stream must still be running while new connections are refused")
        XCTAssertEqual(streamDone.wait(timeout: .now() + 30), .success, "the stream did not end")
        let stream = try XCTUnwrap(streamResult.values.first)
        XCTAssertEqual(stream.status, 200)
        XCTAssertTrue(stream.body.contains("data: 10\n\n") && stream.body.hasSuffix("data: [DONE]\n\n"), stream.body)
        XCTAssertEqual(serve.waitForExit(), 0)
        let streamLine = try XCTUnwrap(serve.lines.first { $0.contains("\"route\":\"proxy\"") && $0.contains("chat/completions") })
        XCTAssertFalse(streamLine.contains("stream_cut"), streamLine)
        XCTAssertTrue(serve.lines.last?.contains("\"event\":\"stopped\"") ?? false)
    }
}
