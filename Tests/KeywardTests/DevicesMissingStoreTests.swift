import Foundation
import Store
import XCTest

/// `keyward devices` works on an existing store: a SQLite path with no file (a typo, the wrong
/// `--config`) is an error naming the path, not an empty store created there and "0 devices".
final class DevicesMissingStoreTests: XCTestCase {
    func testEveryDevicesCommandRefusesAMissingDatabaseFileAndCreatesNothing() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = folder.path + "/typo.sqlite"
        let config = try folder.write("keyward.toml", "[store]\nurl = \"sqlite://\(database)\"\n")
        let commands: [[String]] = [
            ["list"], ["show", "--id", "d1"], ["usage"], ["usage", "--json"],
            ["revoke", "--id", "d1"], ["revoke", "--before", "2026-01-01", "--dry-run"], ["revoke", "--unattested", "--yes"],
            ["unrevoke", "--id", "d1"], ["set-tier", "d1", "free"],
        ]
        for command in commands {
            let result = try KeywardBinary.run(["devices"] + command + ["--config", config])
            XCTAssertEqual(result.status, 1, "\(command): \(result.stdout) \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("sqlite_missing"), "\(command): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("no database file at \(database)"), "\(command): \(result.stderr)")
            XCTAssertFalse(result.stdout.contains("0 devices"), "\(command): \(result.stdout)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: database), "\(command) created \(database)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["keyward.toml"], "no -wal, -shm or lock file either")
    }

    func testTheSameCommandsWorkOnceTheStoreExists() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = folder.path + "/keyward.db"
        let config = try folder.write("keyward.toml", "[store]\nurl = \"sqlite://\(database)\"\n")
        _ = try SQLiteStore(path: database)
        let listed = try KeywardBinary.run(["devices", "list", "--config", config])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertTrue(listed.stdout.contains("0 devices"), listed.stdout)
    }

    func testTheStoreRefusesAMissingFileOnlyWhenAskedTo() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/absent.db"
        var options = SQLiteStore.Options()
        options.createIfMissing = false
        XCTAssertThrowsError(try SQLiteStore(path: path, options: options)) { error in
            XCTAssertEqual((error as? StoreError)?.reason, "sqlite_missing")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        _ = try SQLiteStore(path: path)   // the default (serve, migrate) creates it
        XCTAssertNoThrow(try SQLiteStore(path: path, options: options))
    }
}
