import Foundation

/// Locates shared test vectors next to the repository: `<repo>/../shared/vectors/…` (CONTRACTS.md).
enum TestPaths {
    static var vectors: URL {
        URL(fileURLWithPath: #filePath)          // <repo>/Tests/KeywardCryptoTests/TestPaths.swift
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/vectors")
    }

    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: vectors.appendingPathComponent(relativePath), encoding: .utf8)
    }
}
