import Foundation
import Keyward
import KeywardDemo
import Store
import XCTest

/// SIGHUP says what it did: one line per reloaded part, one naming each changed keyward.toml
/// setting that takes a restart; `serve` waits for its store at start.
final class ServeReloadReportTests: XCTestCase {
    func testSIGHUPLogsEachReloadedPartAndTheSettingsThatNeedARestart() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        guard let serve = try ServeProcess.startedWithIdleProvider(in: folder) else { return }
        defer { serve.stop() }
        let original = try String(contentsOfFile: serve.configPath, encoding: .utf8)
        try original.replacingOccurrences(of: "[shutdown]", with: "[sessions]\nttl_seconds = 600\n[handshake]\nburst = 5\n[shutdown]")
            .write(toFile: serve.configPath, atomically: true, encoding: .utf8)
        serve.signal(SIGHUP)
        XCTAssertTrue(serve.waitFor("restart_required"), serve.lines.joined(separator: "\n"))
        XCTAssertEqual(serve.events("providers_reloaded").count, 1)
        XCTAssertEqual(serve.events("session_keys_reloaded").count, 1)
        let restart = try XCTUnwrap(serve.events("restart_required").first)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(restart.utf8)) as? [String: Any])
        XCTAssertEqual(object["settings"] as? String, "sessions.ttl_seconds,handshake.burst")

        // A keyward.toml that no longer validates is reported, and nothing else changes.
        try (original + "\n[sessions]\nttl_seconds = 5\n").write(toFile: serve.configPath, atomically: true, encoding: .utf8)
        serve.signal(SIGHUP)
        XCTAssertTrue(serve.waitFor("config_reload_refused"), serve.lines.joined(separator: "\n"))
        XCTAssertEqual(serve.events("providers_reloaded").count, 2)
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(), 0)
    }

    func testServeWaitsForItsStoreWithALinePerTry() throws {
        let configuration = try KeywardConfiguration.parse(text: "[store]\nstart_attempts = 4\nstart_retry_seconds = 3", path: "/etc/keyward/keyward.toml")
        XCTAssertEqual(configuration.storeStartAttempts, 4)
        XCTAssertEqual(configuration.storeStartRetrySeconds, 3)
        let sink = MemoryLogSink()
        let logger = Logger(sink: sink, time: SystemTimeSource())
        let tries = ConcurrentResults<Int>()
        let pauses = ConcurrentResults<Int>()
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var working = configuration
        working.storeURL = "postgres://keyward@db/keyward"
        var embedded = configuration
        embedded.storeURL = "sqlite://\(folder.path)/keyward.db"
        let store = try ServiceAssembly.waitForStore(
            working, logger: logger,
            open: { (_) throws(ServiceAssembly.Problem) -> any Store in
                tries.append(1)
                guard tries.values.count >= 3 else { throw ServiceAssembly.Problem("store postgres://keyward@db/keyward: connection refused") }
                return try ServiceAssembly.store(embedded)
            },
            pause: { pauses.append($0) })
        XCTAssertNoThrow(try store.ping())
        XCTAssertEqual(tries.values.count, 3)
        XCTAssertEqual(pauses.values, [3, 3])
        let lines = sink.lines.filter { $0.contains("\"event\":\"store_unavailable\"") }
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[1].contains("\"attempt\":2,\"attempts\":4"), lines[1])

        // Bounded: after the last try the error is thrown.
        XCTAssertThrowsError(try ServiceAssembly.waitForStore(
            working, logger: logger,
            open: { (_) throws(ServiceAssembly.Problem) -> any Store in throw ServiceAssembly.Problem("down") },
            pause: { _ in }))
        XCTAssertEqual(sink.lines.filter { $0.contains("\"event\":\"store_unavailable\"") }.count, 2 + 4)
    }

    func testASchemaNewerThanTheBinaryIsNotTriedAgain() throws {
        var configuration = try KeywardConfiguration.parse(text: "[store]\nstart_attempts = 30", path: "k.toml")
        configuration.storeURL = "postgres://keyward@db/keyward"
        let tries = ConcurrentResults<Int>()
        XCTAssertThrowsError(try ServiceAssembly.waitForStore(
            configuration, logger: Logger(sink: MemoryLogSink(), time: SystemTimeSource()),
            open: { (_) throws(ServiceAssembly.Problem) -> any Store in
                tries.append(1)
                throw ServiceAssembly.Problem("store postgres://keyward@db/keyward: store schema: schema_newer", isPermanent: true)
            },
            pause: { _ in XCTFail("a permanent failure waited") }))
        XCTAssertEqual(tries.values.count, 1)
    }

    func testAnEmbeddedStoreThatCannotOpenFailsAtTheFirstTry() throws {
        var configuration = try KeywardConfiguration.parse(text: "[store]\nstart_attempts = 30\nstart_retry_seconds = 2", path: "/etc/keyward/keyward.toml")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        configuration.storeURL = "sqlite://\(folder.path)"  // a directory, not a database
        let sink = MemoryLogSink()
        let pauses = ConcurrentResults<Int>()
        XCTAssertThrowsError(try ServiceAssembly.waitForStore(
            configuration, logger: Logger(sink: sink, time: SystemTimeSource()), pause: { pauses.append($0) })) { error in
            XCTAssertTrue("\(error)".contains("store sqlite://\(folder.path)"), "\(error)")
        }
        XCTAssertEqual(pauses.values, [])
        let lines = sink.lines.filter { $0.contains("\"event\":\"store_unavailable\"") }
        XCTAssertEqual(lines.count, 1)
        XCTAssertTrue(lines.first?.contains("\"attempt\":1,\"attempts\":1") ?? false, lines.first ?? "")
    }

    func testShutdownAndListenSettingsAreValidated() {
        XCTAssertThrowsError(try KeywardConfiguration.parse(text: "[shutdown]\ndrain_seconds = 7200", path: "k.toml")) { error in
            XCTAssertTrue("\(error)".contains("k.toml:2: shutdown.drain_seconds"), "\(error)")
        }
        XCTAssertThrowsError(try KeywardConfiguration.parse(text: "[listen]\ntrusted_proxies = [\"10.0.0.0/40\"]", path: "k.toml")) { error in
            XCTAssertTrue("\(error)".contains("listen.trusted_proxies[0]"), "\(error)")
        }
        let parsed = try? KeywardConfiguration.parse(
            text: "[listen]\ntrusted_proxies = [\"10.0.0.0/8\", \"fd00::/8\"]\nmax_connections = 5000\nmax_header_bytes = 8192\n[shutdown]\nreadiness_grace_seconds = 1\ndrain_seconds = 60",
            path: "k.toml")
        XCTAssertEqual(parsed?.trustedProxies.ranges.count, 2)
        XCTAssertEqual(parsed?.maxConnections, 5000)
        XCTAssertEqual(parsed?.maxHeaderBytes, 8192)
        XCTAssertEqual(KeywardConfiguration().maxHeaderBytes, 16_384)
        XCTAssertThrowsError(try KeywardConfiguration.parse(text: "[listen]\nmax_header_bytes = 100", path: "k.toml"))
        XCTAssertEqual(parsed?.readinessGraceSeconds, 1)
        XCTAssertEqual(parsed?.drainSeconds, 60)
        XCTAssertEqual(KeywardConfiguration().readinessGraceSeconds, 5)
        XCTAssertEqual(KeywardConfiguration().drainSeconds, 30)
    }

    func testTheDefaultConnectionLimitFollowsTheOpenFileLimit() {
        XCTAssertEqual(ConnectionBudget(previousLimit: 1024, limit: 65_536, hardLimit: 65_536).defaultMaxConnections, 32_640)
        XCTAssertEqual(ConnectionBudget(previousLimit: 256, limit: 256, hardLimit: 256).defaultMaxConnections, 16)
        XCTAssertTrue(ConnectionBudget(previousLimit: 1024, limit: 4096, hardLimit: 4096).message.contains("raised from 1024 to 4096"))
    }
}
