import Foundation
import KeywardCrypto
import XCTest

/// What a vector expects, as a reason slug, and the inputs to check it with.
extension AppAttestVector {
    /// nil for `valid`; otherwise the reason slug the stated failure must produce.
    func expectedReason() throws -> String? {
        if isValid { return nil }
        let table: [(prefix: String, reason: String)] = [
            ("invalid: leaf certificate expired", "certificate_expired"),
            ("invalid: wrong team id", "app_id_mismatch"),
            ("invalid: development attestation (aaguid appattestdevelop) checked by a production", "aaguid_mismatch"),
            ("invalid: production attestation checked with the development fixture challenge (nonce mismatch)", "nonce_mismatch"),
            ("invalid: counter replay", "counter_replay"),
            ("invalid: clientData altered", "signature_invalid"),
            // The published example whose signature does not verify must be rejected: at the signature.
            ("unverified:", "signature_invalid"),
        ]
        guard let match = table.first(where: { expect.hasPrefix($0.prefix) }) else {
            XCTFail("\(name): no reason known for expect '\(expect)'")
            return "unknown"
        }
        return match.reason
    }

    /// clientDataHash: given as hex, else SHA-256 of the clientData bytes.
    func clientDataHash() throws -> [UInt8] {
        if let hex = client_data_hash_hex { return try XCTUnwrap(TestBase64.hex(hex), name) }
        let clientData = try XCTUnwrap(client_data_b64 ?? client_data_b64url, "\(name): no client data")
        return SHA256.hash(try XCTUnwrap(TestBase64.decode(clientData), name))
    }

    /// The App ID; an assertion without team/bundle takes its folder's attestation's.
    func teamAndBundle(in all: [AppAttestVector]) throws -> (team: String, bundle: String) {
        if let team = team_id, let bundle = bundle_id { return (team, bundle) }
        let sibling = try XCTUnwrap(all.first { $0.folder == folder && $0.kind == "attestation" && $0.team_id != nil }, name)
        return (try XCTUnwrap(sibling.team_id), try XCTUnwrap(sibling.bundle_id))
    }

    /// The assertion's public key as a 65-byte point.
    func publicKeyX962() throws -> [UInt8] {
        if let b64 = public_key_x962_b64 { return try XCTUnwrap(TestBase64.decode(b64), name) }
        return try ECPublicKey(pem: try XCTUnwrap(public_key_pem, name)).x962
    }
}
