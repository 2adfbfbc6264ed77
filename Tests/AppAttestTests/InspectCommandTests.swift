import Foundation
import KeywardCrypto
import XCTest

/// `keyward inspect` — the built binary, run as a script would — gives every vector's expected
/// result with the clock pinned to verify_at_unix, and keeps its exit codes.
final class InspectCommandTests: XCTestCase {
    /// The `keyward` product next to the test bundle (same build configuration), else in .build/debug.
    func keywardBinary() throws -> String {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("keyward").path,
            Bundle.main.bundleURL.appendingPathComponent("keyward").path,
            AppAttestVectors.repositoryRoot.appendingPathComponent(".build/debug/keyward").path,
        ]
        return try XCTUnwrap(candidates.first { FileManager.default.isExecutableFile(atPath: $0) },
                             "build the keyward product first (swift build --build-tests builds it)")
    }

    struct Outcome {
        let status: Int32
        let stdout: String
        let stderr: String
        var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
        }
    }

    func inspect(_ arguments: [String]) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try keywardBinary())
        process.arguments = ["inspect"] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                       stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The clientDataHash flag for a vector, exercising all three forms across the set.
    func clientDataArguments(_ vector: AppAttestVector) throws -> [String] {
        if let hex = vector.client_data_hash_hex, vector.name.hasPrefix("apple-sample") {
            return ["--client-data-hash-hex", hex]  // Apple's sample: raw bytes, not a hash
        }
        if let clientData = vector.client_data_b64 ?? vector.client_data_b64url {
            return ["--client-data-b64", clientData]
        }
        if let challenge = vector.challenge_b64 {
            return ["--challenge-b64", challenge]
        }
        return ["--client-data-hash-hex", try XCTUnwrap(vector.client_data_hash_hex, vector.name)]
    }

    func testEveryVectorGivesItsExpectedResultThroughTheBinary() throws {
        let all = try AppAttestVectors.all()
        XCTAssertEqual(all.count, 31)
        for vector in all {
            var arguments = [vector.kind, "--file", vector.path, "--json"]
            let (team, bundle) = try vector.teamAndBundle(in: all)
            arguments += ["--team-id", team, "--bundle-id", bundle]
            arguments += try clientDataArguments(vector)
            if vector.kind == "attestation" {
                arguments += ["--key-id", try XCTUnwrap(vector.key_id_b64), "--environment", try XCTUnwrap(vector.environment),
                              "--at", String(try XCTUnwrap(vector.verify_at_unix))]
            } else {
                arguments += ["--public-key-pem", try ECPublicKey(x962: vector.publicKeyX962()).pem,
                              "--stored-counter", String(vector.previous_counter ?? 0)]
            }
            let outcome = try inspect(arguments)
            let expected = try vector.expectedReason()
            XCTAssertEqual(outcome.status, expected == nil ? 0 : 1, "\(vector.name): \(outcome.stdout) \(outcome.stderr)")
            let json = try XCTUnwrap(outcome.json, "\(vector.name): \(outcome.stdout)")
            XCTAssertEqual(json["valid"] as? Bool, expected == nil, vector.name)
            XCTAssertEqual(json["reason"] as? String, expected, vector.name)
            XCTAssertEqual(json["kind"] as? String, vector.kind, vector.name)
        }
    }

    func testTextOutputListsEachStepWithItsOutcome() throws {
        let vector = try XCTUnwrap(AppAttestVectors.all().first { $0.name == "apple-sample-2024/params.json#1" })
        let outcome = try inspect(["attestation", "--file", vector.path, "--team-id", "0352187391", "--bundle-id", "com.apple.example_app_attest",
                                   "--key-id", try XCTUnwrap(vector.key_id_b64), "--client-data-hash-hex", try XCTUnwrap(vector.client_data_hash_hex),
                                   "--at", "1714521600"])
        XCTAssertEqual(outcome.status, 1)
        XCTAssertTrue(outcome.stdout.hasPrefix("attestation: INVALID (certificate_expired)"), outcome.stdout)
        XCTAssertTrue(outcome.stdout.contains("certificate_chain"), outcome.stdout)
        XCTAssertTrue(outcome.stdout.contains("FAILED certificate_expired"), outcome.stdout)
        XCTAssertTrue(outcome.stdout.contains("credential_id      Apple attestation step 9     ok"), outcome.stdout)
    }

    func testUsageErrorsExitWithTwo() throws {
        let vector = try XCTUnwrap(AppAttestVectors.all().first { $0.kind == "attestation" })
        let base = ["attestation", "--file", vector.path, "--team-id", "T", "--bundle-id", "B", "--key-id", "AAAA"]
        XCTAssertEqual(try inspect([]).status, 2)
        XCTAssertEqual(try inspect(["certificate"]).status, 2)
        XCTAssertEqual(try inspect(base).status, 2, "no clientDataHash flag")
        XCTAssertEqual(try inspect(base + ["--challenge-b64", "AAAA", "--client-data-hash-hex", "00"]).status, 2, "two clientDataHash flags")
        XCTAssertEqual(try inspect(base + ["--challenge-b64", "AAAA", "--unknown", "1"]).status, 2)
        XCTAssertEqual(try inspect(base + ["--challenge-b64", "AAAA", "--environment", "staging"]).status, 2)
        XCTAssertEqual(try inspect(base + ["--challenge-b64", "AAAA", "--at", "yesterday"]).status, 2)
        XCTAssertEqual(try inspect(base + ["--client-data-hash-hex", "xyz"]).status, 2)
        XCTAssertEqual(try inspect(["attestation", "--file", "/nonexistent", "--team-id", "T", "--bundle-id", "B", "--key-id", "AAAA",
                                    "--challenge-b64", "AAAA"]).status, 2)
        XCTAssertEqual(try inspect(["assertion", "--file", vector.path, "--team-id", "T", "--bundle-id", "B", "--public-key-pem", "nope",
                                    "--challenge-b64", "AAAA", "--stored-counter", "0"]).status, 2)
        XCTAssertEqual(try inspect(["--help"]).status, 0)
    }

    func testInspectIntegrityIsDispatchedToThePlayIntegrityInspector() throws {
        let help = try inspect(["integrity", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("keyward inspect integrity"), help.stdout)
        XCTAssertEqual(try inspect(["integrity", "--no-such-flag"]).status, 2)
    }

    func testAFileThatIsNotBase64IsInvalidNotAUsageError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-inspect-\(UUID().uuidString).txt").path
        try "not base64 at all!".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let outcome = try inspect(["attestation", "--file", path, "--team-id", "T", "--bundle-id", "B", "--key-id", "AAAA",
                                   "--challenge-b64", "AAAA", "--json"])
        XCTAssertEqual(outcome.status, 1)
        XCTAssertEqual(outcome.json?["reason"] as? String, "malformed_base64")
    }
}
