import CSQLite
import Foundation
import Keyward
import Store
import TestWaiting
import XCTest

/// `/readyz` tells the truth about the store: 503 while it cannot take a write, 200 again by
/// itself once it can; `serve` does not start on a store it cannot write.
final class ReadinessTests: XCTestCase {
    func testReadinessIsUnavailableWhileTheStoreCannotTakeAWriteAndRecoversByItself() throws {
        let env = try TestDeployment()
        defer { env.shutdown() }
        XCTAssertEqual(try env.client.call("GET", "/readyz").status, 200)
        let holder = try SQLiteLockHolder(path: env.deployment.directory + "/keyward.db")
        let locked = try env.client.call("GET", "/readyz")
        XCTAssertEqual(locked.status, 503)
        XCTAssertEqual(errorCode(locked.body), "unavailable")
        XCTAssertEqual(locked.header("retry-after"), "1")
        XCTAssertEqual(try env.client.call("GET", "/healthz").status, 200)
        holder.release()
        // Nobody intervenes: the next checks find the store writable again.
        XCTAssertTrue(waitUntil(timeout: 10, pollMillis: 50) { (try? env.client.call("GET", "/readyz").status) == 200 }, "/readyz never came back")
    }

    func testReadinessIsUnavailableWhileTheDatabaseIsFullAndRecoversOnceSpaceIsFree() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/keyward.db"
        _ = try SQLiteStore(path: path)
        var options = SQLiteStore.Options()
        // Twenty pages of room beyond the empty schema: SQLite answers SQLITE_FULL past them, as on a full disk.
        options.maxPageCount = try Self.sqlite(path, "PRAGMA page_count") + 20
        let capped = try SQLiteStore(path: path, options: options)
        let env = try TestDeployment(wrapStore: { _ in capped }, store: "sqlite://" + path)
        defer { env.shutdown() }
        XCTAssertEqual(try env.client.call("GET", "/readyz").status, 200)
        var filled = false
        for n in 0..<100_000 where !filled {
            var hash = [UInt8](repeating: 0, count: 32)
            withUnsafeBytes(of: UInt64(n).littleEndian) { hash.replaceSubrange(0..<8, with: $0) }
            do { try capped.putChallenge(hash: hash, expiresAt: 4_000_000_000) } catch { filled = (error as? StoreError)?.reason == "sqlite_full" }
        }
        XCTAssertTrue(filled)
        // A full database refuses the writes that need a new page; challenges land on random pages,
        // so some still fit: the next ones through HTTP soon meet a page that does not.
        var refused = 0
        for _ in 0..<1_000 where refused == 0 {
            let status = try env.client.postJSON("/v1/challenge", [:]).0.status
            if status == 503 { refused += 1 } else { XCTAssertEqual(status, 200) }
        }
        XCTAssertEqual(refused, 1)
        let full = try env.client.call("GET", "/readyz")
        XCTAssertEqual(full.status, 503)
        XCTAssertEqual(errorCode(full.body), "unavailable")
        // The operator frees space (here: rows deleted by another process); nobody restarts Keyward.
        _ = try Self.sqlite(path, "DELETE FROM challenges")
        XCTAssertTrue(waitUntil(timeout: 10, pollMillis: 50) { (try? env.client.call("GET", "/readyz").status) == 200 }, "/readyz never came back")
        XCTAssertEqual(try env.client.postJSON("/v1/challenge", [:]).0.status, 200)
        // One line when readiness was lost, with the store's reason, and one when it came back.
        let notReady = env.logLines.filter { $0.contains("\"event\":\"store_not_ready\"") }
        XCTAssertEqual(notReady.count, 1, notReady.joined(separator: "\n"))
        XCTAssertTrue(notReady.first?.contains("\"reason\":\"sqlite_full\"") == true, notReady.joined(separator: "\n"))
        XCTAssertEqual(env.logLines.filter { $0.contains("\"event\":\"store_ready\"") }.count, 1)
    }

    func testReadinessIsUnavailableOnceARateWindowWriteFindsTheDatabaseFull() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/keyward.db"
        _ = try SQLiteStore(path: path)
        var options = SQLiteStore.Options()
        options.maxPageCount = try Self.sqlite(path, "PRAGMA page_count") + 40
        let capped = try SQLiteStore(path: path, options: options)
        let env = try TestDeployment(chatOptions: "rate_limit = { per_minute = 1000000 }", wrapStore: { _ in capped }, store: "sqlite://" + path)
        defer { env.shutdown() }
        let (_, token) = try env.session()
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
        // Another store over the file fills it: no write of the serving store has failed so far.
        let filler = try SQLiteStore(path: path, options: options)
        var filled = false
        for n in 0..<100_000 where !filled {
            var hash = [UInt8](repeating: 0, count: 32)
            withUnsafeBytes(of: UInt64(n).littleEndian) { hash.replaceSubrange(0..<8, with: $0) }
            do { try filler.putChallenge(hash: hash, expiresAt: 4_000_000_000) } catch { filled = (error as? StoreError)?.reason == "sqlite_full" }
        }
        XCTAssertTrue(filled)
        XCTAssertEqual(try env.client.call("GET", "/readyz").status, 200)
        // Each proxied call's admission is one more row; the table soon needs a page it cannot have.
        var refused = false
        for _ in 0..<5_000 where !refused {
            let response = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
            if response.status == 503 { refused = true } else { XCTAssertEqual(response.status, 200) }
        }
        XCTAssertTrue(refused)
        let failures = env.logLines.filter { $0.contains("\"event\":\"store_error\"") }
        XCTAssertTrue(failures.allSatisfy { $0.contains("\"operation\":\"rate_consume\"") && $0.contains("\"reason\":\"sqlite_full\"") },
                      failures.joined(separator: "\n"))
        let full = try env.client.call("GET", "/readyz")
        XCTAssertEqual(full.status, 503)
        XCTAssertEqual(errorCode(full.body), "unavailable")
        let notReady = env.logLines.filter { $0.contains("\"event\":\"store_not_ready\"") }
        XCTAssertEqual(notReady.count, 1, notReady.joined(separator: "\n"))
        XCTAssertTrue(notReady.first?.contains("\"reason\":\"sqlite_full\"") == true, notReady.joined(separator: "\n"))
        // Space comes back: readiness and the proxied calls return by themselves.
        _ = try Self.sqlite(path, "DELETE FROM challenges")
        XCTAssertTrue(waitUntil(timeout: 10, pollMillis: 50) { (try? env.client.call("GET", "/readyz").status) == 200 }, "/readyz never came back")
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
    }

    /// Runs one statement on a connection of its own (another process's view) and returns the first
    /// column of its first row as an integer (0 without rows).
    private static func sqlite(_ path: String, _ sql: String) throws -> Int {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { throw CocoaError(.fileReadUnknown) }
        defer { sqlite3_close_v2(db) }
        sqlite3_busy_timeout(db, 5_000)
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw CocoaError(.fileReadUnknown) }
        defer { sqlite3_finalize(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_ROW || code == SQLITE_DONE else { throw CocoaError(.fileWriteUnknown) }
        return code == SQLITE_ROW ? Int(sqlite3_column_int64(statement, 0)) : 0
    }

    func testServeRefusesToStartOnAStoreItCannotWrite() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = folder.path + "/keyward.db"
        // A database made by someone else, readable but not writable by the serving user.
        let created = try KeywardBinary.run(["migrate", "--config", try configuration(folder, database: database)],
                                            environment: ["KEYWARD_SESSION_KEY": CommandLineTests.sessionKeyPEM])
        XCTAssertEqual(created.status, 0, created.stderr)
        let config = try configuration(folder, database: database)
        var command = [KeywardBinary.path, "serve", "--config", config]
        if getuid() == 0 {
            // Root writes any file: serve as an unprivileged user instead.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder.path + "/" + file)
            }
            command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: database)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder.path)
        }
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path) }
        let serve = try run(command, environment: ["KEYWARD_SESSION_KEY": CommandLineTests.sessionKeyPEM, "UP_KEY": "k"])
        XCTAssertEqual(serve.status, 1, serve.stderr)
        XCTAssertTrue(serve.stderr.contains("sqlite_readonly"), serve.stderr)
    }

    private func configuration(_ folder: TemporaryFolder, database: String) throws -> String {
        _ = try folder.write("providers.toml", """
            [up]
            base_url = "http://127.0.0.1:9"
            allow_http_loopback = true
            secret = "UP_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "GET", path = "/v1/models" } ]
            """)
        return try folder.write("keyward.toml", """
            providers_file = "providers.toml"
            [listen]
            proxy = "127.0.0.1:\(freeLoopbackPort())"
            admin = "127.0.0.1:\(freeLoopbackPort())"
            [store]
            url = "sqlite://\(database)"
            start_attempts = 1
            """)
    }

    private func run(_ command: [String], environment: [String: String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
