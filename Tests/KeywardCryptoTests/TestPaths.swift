import Foundation

/// Locates the repository's test vectors: `<repo>/Tests/Fixtures/vectors/…` (their provenance is in
/// `Tests/Fixtures/vectors/README.md` and each folder's `PROVENANCE.md`).
enum TestPaths {
    static var vectors: URL {
        URL(fileURLWithPath: #filePath)          // <repo>/Tests/KeywardCryptoTests/TestPaths.swift
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/vectors")
    }

    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: vectors.appendingPathComponent(relativePath), encoding: .utf8)
    }
}
