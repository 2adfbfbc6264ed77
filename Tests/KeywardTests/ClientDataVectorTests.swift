import AppAttest
import Foundation
import KeywardCrypto
import PlayIntegrity
import ProviderRegistry
import XCTest

/// The worked examples in `Tests/Fixtures/client-data-vectors.json`, checked against the server's
/// own code. The SDK's tests (KeywardClientTests) check the same file against the SDK, so the
/// two sides cannot drift apart.
final class ClientDataVectorTests: XCTestCase {
    static let fixture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/client-data-vectors.json")

    func vectors() throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixture)) as? [String: Any])
    }

    func testServerBuildsEveryClientDataExactlyAsTheVectorsSay() throws {
        let cases = try XCTUnwrap(try vectors()["client_data"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(cases.count, 5)
        for vector in cases {
            let name = try XCTUnwrap(vector["name"] as? String)
            let body = try XCTUnwrap(Base64.decode(try XCTUnwrap(vector["body_base64"] as? String)))
            XCTAssertEqual(Base64.encodeURL(SHA256.hash(body)), vector["body_sha256_base64url"] as? String, name)
            let bytes = AssertionClientData.bytes(
                method: try XCTUnwrap(vector["method"] as? String), path: try XCTUnwrap(vector["path"] as? String),
                query: vector["query"] as? String, body: body, timestamp: try XCTUnwrap(vector["timestamp"] as? String),
                sha256: SHA256.hash)
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), vector["client_data"] as? String, name)
            XCTAssertEqual(Hex.encode(SHA256.hash(bytes)), vector["client_data_hash_hex"] as? String, name)
        }
    }

    func testHandshakeHashIsOfTheDecodedChallengeAndTheKeyIDIsTheDevice() throws {
        let all = try vectors()
        let handshake = try XCTUnwrap(all["handshake"] as? [String: Any])
        let challenge = try XCTUnwrap(Base64.decode(try XCTUnwrap(handshake["challenge"] as? String)))
        XCTAssertEqual(challenge.count, 32)
        XCTAssertEqual(Hex.encode(challenge), handshake["challenge_bytes_hex"] as? String)
        XCTAssertEqual(Hex.encode(SHA256.hash(challenge)), handshake["client_data_hash_hex"] as? String)
        XCTAssertNotEqual(handshake["client_data_hash_hex"] as? String, handshake["wrong_hash_of_the_challenge_string_hex"] as? String)

        let device = try XCTUnwrap(all["device"] as? [String: Any])
        let publicKey = try XCTUnwrap(Base64.decode(try XCTUnwrap(device["public_key_x962_base64"] as? String)))
        XCTAssertEqual(Base64.encode(SHA256.hash(publicKey)), device["key_id"] as? String)
        XCTAssertEqual(Hex.encode(SHA256.hash(publicKey)), device["device_id"] as? String)
        let privateKey = try ECPrivateKey(pkcs8PEM: try XCTUnwrap(device["private_key_pkcs8_pem"] as? String))
        XCTAssertEqual(privateKey.publicKey.x962, publicKey)

        let android = try XCTUnwrap(all["android"] as? [String: Any])
        let androidChallenge = try XCTUnwrap(Base64.decode(try XCTUnwrap(android["challenge"] as? String)))
        let installID = try XCTUnwrap(android["install_id"] as? String)
        XCTAssertEqual(IntegrityBinding.text(challenge: androidChallenge, installID: installID), android["request_hash"] as? String)
        XCTAssertEqual(
            Hex.encode(SHA256.hash(Array("com.example.app".utf8) + Array(installID.utf8))), android["device_id"] as? String)
    }

    func testTheWorkedSignedRequestVerifiesWithTheServersAssertionVerifier() throws {
        let all = try vectors()
        let signed = try XCTUnwrap(all["signed_request"] as? [String: Any])
        let cases = try XCTUnwrap(all["client_data"] as? [[String: Any]])
        let vector = try XCTUnwrap(cases.first { $0["name"] as? String == signed["vector"] as? String })
        let headers = try XCTUnwrap(signed["headers"] as? [String: String])
        XCTAssertEqual(headers["X-Keyward-Timestamp"], vector["timestamp"] as? String)
        let assertion = try XCTUnwrap(Base64.decode(try XCTUnwrap(headers["X-Keyward-Assertion"])))
        let device = try XCTUnwrap(all["device"] as? [String: Any])
        let publicKey = try XCTUnwrap(Base64.decode(try XCTUnwrap(device["public_key_x962_base64"] as? String)))
        let clientDataHash = try XCTUnwrap(Hex.decode(try XCTUnwrap(vector["client_data_hash_hex"] as? String)))
        let verifier = AssertionVerifier(teamID: "DEMOTEAM01", bundleIDs: ["dev.keyward.demo"])
        let counter = try verifier.verify(
            assertion: assertion, publicKey: publicKey, clientDataHash: clientDataHash, storedCounter: 0,
            appID: all["app_id"] as? String)
        XCTAssertEqual(counter, 1)
        XCTAssertEqual(Int(counter), signed["counter"] as? Int)
        // The same assertion over any other clientData is refused.
        XCTAssertThrowsError(try verifier.verify(
            assertion: assertion, publicKey: publicKey, clientDataHash: SHA256.hash(clientDataHash), storedCounter: 0, appID: nil))
    }
}
