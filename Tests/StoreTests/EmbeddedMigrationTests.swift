import Foundation
import XCTest
@testable import Store

/// The SQL in `Migrations/` is canonical; the binary carries a copy. These keep the two identical.
final class EmbeddedMigrationTests: XCTestCase {
    func testSQLiteMirrorIsByteIdenticalToMigrationsDirectory() throws {
        try assertMirror(SQLiteMigrations.all, directory: "sqlite", mirror: "SQLiteMigrations.swift")
    }

    func testPostgresMirrorIsByteIdenticalToMigrationsDirectory() throws {
        try assertMirror(PostgresMigrations.all, directory: "postgres", mirror: "PostgresMigrations.swift")
    }

    func testMigrationFileNamesArePaddedToThreeDigits() {
        XCTAssertEqual(Migration(version: 7, name: "rate_keys", sql: "").fileName, "007_rate_keys.sql")
        XCTAssertEqual(Migration(version: 1234, name: "x", sql: "").fileName, "1234_x.sql")
    }

    func testPendingRefusesUnknownOrRenamedVersions() throws {
        let all = [Migration(version: 1, name: "initial", sql: ""), Migration(version: 2, name: "more", sql: "")]
        XCTAssertEqual(try Migration.pending(all, applied: [1: "initial"]).map(\.version), [2])
        XCTAssertEqual(try Migration.pending(all, applied: [:]).map(\.version), [1, 2])
        XCTAssertThrowsError(try Migration.pending(all, applied: [3: "future"])) { XCTAssertEqual(($0 as? StoreError)?.reason, "schema_newer") }
        XCTAssertThrowsError(try Migration.pending(all, applied: [1: "other"])) { XCTAssertEqual(($0 as? StoreError)?.reason, "schema_mismatch") }
    }

    private func assertMirror(_ embedded: [Migration], directory: String, mirror: String) throws {
        let folder = repositoryRoot().appendingPathComponent("Migrations/\(directory)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        XCTAssertFalse(files.isEmpty)
        XCTAssertEqual(embedded.map(\.fileName), files, "Sources/Store/Migrations/\(mirror) must list every Migrations/\(directory) file, in order")
        XCTAssertEqual(embedded.map(\.version), Array(1...embedded.count), "versions are 1, 2, 3 … without gaps")
        for migration in embedded {
            let onDisk = try Data(contentsOf: folder.appendingPathComponent(migration.fileName))
            XCTAssertEqual(Array(onDisk), Array(migration.sql.utf8),
                           "\(migration.fileName) differs from its copy in Sources/Store/Migrations/\(mirror): paste the file between the delimiters")
        }
    }
}
