import AppAttest
import Foundation
import XCTest

/// `keyward inspect receipt`, the built binary: the real vectors' receipts verify at a time in their
/// window, an expired one and a tampered one exit 1 with their reasons, bad flags exit 2.
extension InspectCommandTests {
    func testInspectReceiptOfEveryValidAttestationVectorExitsZero() throws {
        let vectors = try AppAttestVectors.all().filter { $0.kind == "attestation" && $0.isValid }
        XCTAssertEqual(vectors.count, 14)
        var seen = Set<String>()
        for vector in vectors where seen.insert(vector.path).inserted {
            // --at: the receipt's creation time, which the first run prints.
            let first = try inspect(["receipt", "--attestation-file", vector.path, "--at", "0", "--json"])
            let created = try XCTUnwrap(creationTime(first), vector.name)
            let outcome = try inspect(["receipt", "--attestation-file", vector.path, "--at", String(created + 60), "--json"])
            XCTAssertEqual(outcome.status, 0, "\(vector.name): \(outcome.stdout)")
            let details = try XCTUnwrap(outcome.json?["details"] as? [String: String], vector.name)
            XCTAssertEqual(details["app_id"], vector.receipt_app_id, vector.name)
            XCTAssertEqual(details["receipt_type"], "ATTEST", vector.name)
            XCTAssertEqual(details["attested_key_id_b64"], vector.key_id_b64, vector.name)
            XCTAssertTrue(details["risk_metric"]?.hasPrefix("none") ?? false, vector.name)
        }
        XCTAssertEqual(seen.count, 14)
    }

    func testInspectReceiptRefusalsAndUsage() throws {
        let sample = AppAttestVectors.directory.appendingPathComponent("apple-sample-2024/attestation.b64").path
        let expired = try inspect(["receipt", "--attestation-file", sample, "--at", "1721232895", "--json"])
        XCTAssertEqual(expired.status, 1)
        XCTAssertEqual(expired.json?["reason"] as? String, "receipt_expired")
        // A day before the receipt was made (its certificates were valid): refused, and said so.
        let checker = AppAttestVectors.directory.appendingPathComponent("appattest-checker-node/attestation.b64").path
        let early = try inspect(["receipt", "--attestation-file", checker, "--at", "1706289333", "--json"])
        XCTAssertEqual(early.status, 1, early.stdout)
        XCTAssertEqual(early.json?["reason"] as? String, "receipt_before_creation")
        XCTAssertEqual(try inspect(["receipt", "--attestation-file", checker, "--at", "1706372133"]).status, 0)
        let text = try inspect(["receipt", "--attestation-file", sample, "--at", "1713456954"])
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdout.hasPrefix("receipt: valid\n"), text.stdout)
        XCTAssertTrue(text.stdout.contains("  creation_time: 2024-04-18T16:14:54Z (1713456894)\n"), text.stdout)

        // A bare receipt, tampered: its last signature byte (before three end-of-contents markers).
        let object = try TestBase64.decode(String(contentsOfFile: sample, encoding: .utf8)).map { try AttestationObjectBytes.receipt(in: $0) }
        var receipt = try XCTUnwrap(object)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inspect-receipt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("good.der")
        try Data(receipt).write(to: good)
        XCTAssertEqual(try inspect(["receipt", "--receipt-file", good.path, "--at", "1713456954"]).status, 0)
        let base64 = directory.appendingPathComponent("good.b64")
        try Data(Data(receipt).base64EncodedString().utf8).write(to: base64)
        XCTAssertEqual(try inspect(["receipt", "--receipt-file", base64.path, "--at", "1713456954"]).status, 0)
        receipt[receipt.count - 7] ^= 1
        let bad = directory.appendingPathComponent("bad.der")
        try Data(receipt).write(to: bad)
        let tampered = try inspect(["receipt", "--receipt-file", bad.path, "--at", "1713456954", "--json"])
        XCTAssertEqual(tampered.status, 1)
        XCTAssertEqual(tampered.json?["reason"] as? String, "receipt_signature_invalid")

        XCTAssertEqual(try inspect(["receipt", "--at", "5"]).status, 2)
        XCTAssertEqual(try inspect(["receipt", "--attestation-file", sample, "--receipt-file", good.path]).status, 2)
        XCTAssertEqual(try inspect(["receipt", "--attestation-file", sample, "--at", "soon"]).status, 2)
        XCTAssertEqual(try inspect(["receipt", "--receipt-file", directory.appendingPathComponent("absent").path]).status, 2)
    }

    private func creationTime(_ outcome: Outcome) -> Int64? {
        guard let details = outcome.json?["details"] as? [String: String], let text = details["creation_time"],
              let open = text.lastIndex(of: "("), let close = text.lastIndex(of: ")")
        else { return nil }
        return Int64(text[text.index(after: open)..<close])
    }
}

/// The receipt inside an attestation object, read with the library's decoder.
enum AttestationObjectBytes {
    static func receipt(in bytes: [UInt8]) throws -> [UInt8] {
        try AttestationObject(bytes: bytes).receipt
    }
}
