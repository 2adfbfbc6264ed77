import Foundation
@testable import KeywardClient
import Keyward
import XCTest

/// The SDK's encodings against the worked examples the server's tests also check
/// (`Tests/Fixtures/client-data-vectors.json`), and its small parsers.
final class ClientEncodingTests: XCTestCase {
    static let fixture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/client-data-vectors.json")

    func vectors() throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixture)) as? [String: Any])
    }

    func testRequestClientDataMatchesEveryVector() throws {
        let cases = try XCTUnwrap(try vectors()["client_data"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(cases.count, 5)
        for vector in cases {
            let name = try XCTUnwrap(vector["name"] as? String)
            let body = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(vector["body_base64"] as? String)))
            let method = try XCTUnwrap(vector["method"] as? String)
            let path = try XCTUnwrap(vector["path"] as? String)
            let timestamp = try XCTUnwrap(vector["timestamp"] as? String)
            let query = vector["query"] as? String
            XCTAssertEqual(SHA256Digest.hash(body).base64URLUnpadded, vector["body_sha256_base64url"] as? String, name)
            let bytes = RequestClientData.bytes(method: method, path: path, query: query, body: body, timestamp: timestamp)
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), vector["client_data"] as? String, name)
            XCTAssertEqual(
                hex(RequestClientData.hash(method: method, path: path, query: query, body: body, timestamp: timestamp)),
                vector["client_data_hash_hex"] as? String, name)
        }
    }

    func testHandshakeAndAndroidEncodingsMatchTheVectors() throws {
        let all = try vectors()
        let handshake = try XCTUnwrap(all["handshake"] as? [String: Any])
        let challenge = try XCTUnwrap(handshake["challenge"] as? String)
        XCTAssertEqual(HandshakeEncoding.clientDataHash(challenge: challenge).map(hex), handshake["client_data_hash_hex"] as? String)
        XCTAssertEqual(HandshakeEncoding.clientDataHash(challenge: challenge)?.base64EncodedString(), handshake["client_data_hash_base64"] as? String)
        XCTAssertNil(HandshakeEncoding.clientDataHash(challenge: "not base64!"))

        let android = try XCTUnwrap(all["android"] as? [String: Any])
        XCTAssertEqual(
            HandshakeEncoding.androidRequestHash(
                challenge: try XCTUnwrap(android["challenge"] as? String), installID: try XCTUnwrap(android["install_id"] as? String)),
            android["request_hash"] as? String)

        let device = try XCTUnwrap(all["device"] as? [String: Any])
        let publicKey = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(device["public_key_x962_base64"] as? String)))
        XCTAssertEqual(SHA256Digest.hash(publicKey).base64EncodedString(), device["key_id"] as? String)
    }

    func testSHA256KnownAnswers() {
        // FIPS 180-4 examples: "", "abc", and the two-block 448-bit message; plus a million 'a's.
        XCTAssertEqual(hex(SHA256Digest.hash(Data())), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(hex(SHA256Digest.hash(Data("abc".utf8))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(
            hex(SHA256Digest.hash(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(
            hex(SHA256Digest.hash(Data(repeating: 0x61, count: 1_000_000))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testServerSentEventsSplitOnBlankLinesWhateverTheChunking() {
        let stream = Data(": comment\r\nevent: delta\r\ndata: a\r\ndata:  b\r\nid: 7\r\n\r\ndata: [DONE]\n\nretry: 50\ndata\n\n".utf8)
        let expected = [
            ServerSentEvent(event: "delta", data: "a\n b", id: "7", retryMillis: nil),
            ServerSentEvent(event: "message", data: "[DONE]", id: "7", retryMillis: nil),
            ServerSentEvent(event: "message", data: "", id: "7", retryMillis: 50),
        ]
        var whole = ServerSentEventParser()
        XCTAssertEqual(whole.feed(stream), expected)
        // One byte at a time: a CRLF split across chunks is still one line end.
        var bytewise = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        for byte in stream { events += bytewise.feed(Data([byte])) }
        XCTAssertEqual(events, expected)
        var unfinished = ServerSentEventParser()
        XCTAssertEqual(unfinished.feed(Data("data: 1\n".utf8)), [], "an event without its blank line is not dispatched")
    }

    func testKeyUnknownAndTheInvalidKeyErrorMeanANewKeyAndNothingElseDoes() {
        let refusal = { (code: String) in
            KeywardError.refused(KeywardRefusal(code: KeywardErrorCode(code: code), status: 401, retryAfterSeconds: nil, requestID: nil))
        }
        XCTAssertTrue(KeywardClient.needsNewKey(after: refusal("key_unknown")))
        XCTAssertTrue(KeywardClient.needsNewKey(after: AttestationServiceError.invalidKey))
        XCTAssertFalse(KeywardClient.needsNewKey(after: refusal("attestation_invalid")))
        XCTAssertFalse(KeywardClient.needsNewKey(after: refusal("forbidden")))
        XCTAssertFalse(KeywardClient.needsNewKey(after: AttestationServiceError.failed("x")))
        XCTAssertEqual(KeywardErrorCode(code: "key_unknown"), .keyUnknown)
        XCTAssertEqual(KeywardErrorCode(code: "rate_limited"), .rateLimited)
        XCTAssertEqual(KeywardErrorCode(code: "brand_new"), .other("brand_new"))
    }

    /// Every code the server's API table has is a case of its own in the SDK, so an app can switch
    /// over budgets and the gate instead of comparing strings.
    func testEveryServerCodeIsKnownToTheSDK() {
        for code in APIErrorCode.allCases {
            if case .other(let text) = KeywardErrorCode(code: code.rawValue) { XCTFail("the SDK does not know \(text)") }
        }
        XCTAssertEqual(KeywardErrorCode(code: "install_budget_exhausted"), .installBudgetExhausted)
        XCTAssertEqual(KeywardErrorCode(code: "app_budget_exhausted"), .appBudgetExhausted)
        XCTAssertEqual(KeywardErrorCode(code: "attestation_required"), .attestationRequired)
    }

    func testRequestsThatWouldFormAnotherURLAreRefusedBeforeSending() {
        for bad in [
            ProviderRequest(provider: "a/b", path: "/x"), ProviderRequest(provider: "", path: "/x"),
            ProviderRequest(provider: "chat", path: "x"), ProviderRequest(provider: "chat", path: "/x?y=1"),
            ProviderRequest(method: "GE T", provider: "chat", path: "/x"),
            ProviderRequest(provider: "chat", path: "/a b"), ProviderRequest(provider: "chat", path: "/x#y"),
            ProviderRequest(provider: "chat", path: "/é"), ProviderRequest(provider: "chat", path: "/x", query: "a=b c"),
            ProviderRequest(provider: "chat", path: "/x", query: "a#b"),
            ProviderRequest(provider: "chat", path: "/v1/../x"), ProviderRequest(provider: "chat", path: "/v1/./x"),
            ProviderRequest(provider: "chat", path: "/v1/.."),
        ] {
            XCTAssertThrowsError(try bad.validate()) { error in
                guard case KeywardError.invalidRequest = error else { return XCTFail("\(error)") }
            }
        }
        XCTAssertNoThrow(try ProviderRequest(provider: "open_ai-2", path: "/v1/a%20b:c@d", query: "q=%C3%A9&x=/?y").validate())
        XCTAssertNoThrow(try ProviderRequest(provider: "chat", path: "/v1/file.v2/...x").validate(), "dots inside a segment are data")
    }

    func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
}
