import Foundation
import XCTest

/// One entry of `Tests/Fixtures/vectors/appattest/<source>/params.json` (see the vectors README).
struct AppAttestVector: Decodable {
    let kind: String
    let file: String
    let team_id: String?
    let bundle_id: String?
    let key_id_b64: String?
    let environment: String?
    let verify_at_unix: Int64?
    let expect: String
    let counter: UInt32?
    let previous_counter: UInt32?
    let client_data_hash_hex: String?
    let challenge_b64: String?
    let client_data_b64: String?
    let client_data_b64url: String?
    let public_key_pem: String?
    let public_key_x962_b64: String?
    let rp_id_hash_b64: String?
    let aaguid_hex: String?
    let receipt_app_id: String?
    let belongs_to_attestation: String?

    /// `<source>/params.json#<index>`, for messages.
    var name: String = ""
    /// The folder holding the data file.
    var folder: URL = URL(fileURLWithPath: "/")

    private enum CodingKeys: String, CodingKey {
        case kind, file, team_id, bundle_id, key_id_b64, environment, verify_at_unix, expect, counter,
            previous_counter, client_data_hash_hex, challenge_b64, client_data_b64, client_data_b64url,
            public_key_pem, public_key_x962_b64, rp_id_hash_b64, aaguid_hex, receipt_app_id, belongs_to_attestation
    }

    var path: String { folder.appendingPathComponent(file).path }

    /// The data file's bytes (its text is base64 or base64url).
    func data() throws -> [UInt8] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try XCTUnwrap(TestBase64.decode(text), "\(name): data file is not base64")
    }

    var isValid: Bool { expect == "valid" }
}

enum AppAttestVectors {
    /// The repository root, from this file's path (Tests/AppAttestTests/…).
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// `<root>/Tests/Fixtures/vectors/appattest`.
    static let directory = repositoryRoot.appendingPathComponent("Tests/Fixtures/vectors/appattest").standardizedFileURL

    /// Every vector of every `params.json`, in folder order.
    static func all() throws -> [AppAttestVector] {
        let folders = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        var vectors: [AppAttestVector] = []
        for folder in folders {
            let folderURL = directory.appendingPathComponent(folder)
            let params = folderURL.appendingPathComponent("params.json")
            guard FileManager.default.fileExists(atPath: params.path) else { continue }
            let decoded = try JSONDecoder().decode([AppAttestVector].self, from: Data(contentsOf: params))
            for (index, var vector) in decoded.enumerated() {
                vector.name = "\(folder)/params.json#\(index)"
                vector.folder = folderURL
                vectors.append(vector)
            }
        }
        return vectors
    }
}

/// Base64 for test fixtures (either alphabet, padded or not), independent of the code under test.
enum TestBase64 {
    static func decode(_ text: String) -> [UInt8]? {
        var cleaned = text.filter { !$0.isWhitespace }.replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while cleaned.count % 4 != 0 { cleaned += "=" }
        return Data(base64Encoded: cleaned).map { Array($0) }
    }

    static func hex(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let byte = UInt8(String(decoding: characters[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
