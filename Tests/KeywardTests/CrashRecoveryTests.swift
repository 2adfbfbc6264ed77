import CSQLite
import Foundation
import KeywardDemo
import TestWaiting
import Upstream
import XCTest

/// `keyward serve` killed with SIGKILL at random moments under rate-limited load: after every
/// restart the store remembers at least every admission a client was told about (a 200 went
/// upstream only after its admission committed), and the database is intact.
final class CrashRecoveryTests: XCTestCase {
    func testTwentyKillsUnderLoadForgetNoAdmissionThatReachedTheProvider() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let upstream = FakeProvider(expectedAuthorization: "Bearer up-key")
        try upstream.start()
        defer { upstream.stop() }
        let port = freeLoopbackPort()
        let database = folder.path + "/keyward.db"
        _ = try folder.write("providers.toml", """
            [metered]
            base_url = "http://127.0.0.1:\(upstream.port)"
            allow_http_loopback = true
            secret = "UP_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "GET", path = "/v1/models" } ]
            rate_limit = { per_minute = 100000, per_day = 1000000 }
            """)
        let config = try folder.write("keyward.toml", """
            providers_file = "providers.toml"
            [listen]
            proxy = "127.0.0.1:\(port)"
            admin = "127.0.0.1:\(freeLoopbackPort())"
            [store]
            url = "sqlite://\(database)"
            """)
        let environment = ["KEYWARD_SESSION_KEY": CommandLineTests.sessionKeyPEM, "UP_KEY": "up-key"]
        let devices = (1...4).map { "crash-device-\($0)" }
        var tokens: [String] = []
        for device in devices {
            let minted = try KeywardBinary.run(
                ["sessions", "mint", "--config", config, "--device", device, "--register", "--token-only"], environment: environment)
            XCTAssertEqual(minted.status, 0, minted.stderr)
            tokens.append(minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let client = UpstreamClient()
        defer { client.shutdown() }
        let demo = DemoClient(baseURL: "http://127.0.0.1:\(port)", client: client)
        let received = Locked([Int](repeating: 0, count: devices.count))
        var generator = SystemRandomNumberGenerator()
        for round in 0..<20 {
            let serve = Process()
            serve.executableURL = URL(fileURLWithPath: KeywardBinary.path)
            serve.arguments = ["serve", "--config", config]
            serve.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            serve.standardError = FileHandle.nullDevice
            try serve.run()
            XCTAssertTrue(waitUntil(timeout: 20) { (try? demo.call("GET", "/healthz").status) == 200 }, "round \(round): serve did not start")
            // Four clients, one per device, as fast as they can until the process dies.
            let running = Locked(true)
            let group = DispatchGroup()
            for (index, token) in tokens.enumerated() {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    while running.withLock({ $0 }) {
                        guard let response = try? demo.call("GET", "/p/metered/v1/models", headers: [("Authorization", "Bearer " + token)])
                        else { continue }
                        if response.status == 200 { received.withLock { $0[index] += 1 } }
                    }
                }
            }
            // A random moment under load (the wait is the behaviour under test: when the kill lands).
            Thread.sleep(forTimeInterval: Double.random(in: 0.1...0.6, using: &generator))  // a random kill moment: the behaviour under test
            kill(serve.processIdentifier, SIGKILL)
            serve.waitUntilExit()
            running.withLock { $0 = false }
            XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
            let remembered = devices.map { Self.admissions(database, key: "metered|\($0)") }
            let told = received.withLock { $0 }
            for index in devices.indices {
                XCTAssertGreaterThanOrEqual(remembered[index], told[index], "round \(round), \(devices[index]): the store forgot admissions")
            }
        }
        XCTAssertGreaterThan(received.withLock { $0 }.reduce(0, +), 20, "the load never got through")
        XCTAssertEqual(Self.integrityCheck(database), "ok")
    }

    /// Persisted admissions of `key`, read on a connection of the test's own.
    static func admissions(_ path: String, key: String) -> Int { SQLiteLockHolder.admissions(path: path, key: key) }

    /// `PRAGMA integrity_check`'s first row.
    static func integrityCheck(_ path: String) -> String {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { return "cannot open" }
        defer { sqlite3_close_v2(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nil) == SQLITE_OK else { return "cannot prepare" }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return "no row" }
        return String(cString: text)
    }
}

/// A value behind a lock, for the test's threads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
