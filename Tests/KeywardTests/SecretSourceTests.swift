import Foundation
import Keyward
import ProviderRegistry
import XCTest

/// Secrets from files and variables: exactly one trailing newline (LF or CRLF) is dropped, as
/// editors and `echo` end a file; anything more is part of the value, where a provider key refuses it.
final class SecretSourceTests: XCTestCase {
    func testOneTrailingNewlineIsDroppedAndASecondStaysInTheValue() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func value(_ contents: String) throws -> String {
            let path = folder.appendingPathComponent("k").path
            try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
            return try SecretSource(environment: ["K_FILE": path]).value("K")
        }
        XCTAssertEqual(try value("sk-one\n"), "sk-one")
        XCTAssertEqual(try value("sk-one\r\n"), "sk-one")
        XCTAssertEqual(try value("sk-one"), "sk-one")
        XCTAssertEqual(try value("sk-two\n\n"), "sk-two\n")
        XCTAssertThrowsError(try SecretValue.validate(try value("sk-two\n\n"))) { error in
            XCTAssertEqual((error as? SecretValueError)?.reason, "secret_control_character")
        }
        // A variable filled from a file keeps the file's newline: the same one is dropped.
        XCTAssertEqual(try SecretSource(environment: ["K": "sk-env\n"]).value("K"), "sk-env")
        XCTAssertEqual(try SecretSource(environment: ["K": "sk-env\n\n"]).value("K"), "sk-env\n")
        XCTAssertEqual(try SecretSource(environment: ["K": "sk-env"]).value("K"), "sk-env")
    }
}
