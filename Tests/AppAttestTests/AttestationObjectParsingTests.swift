import AppAttest
import CBOR
import XCTest

/// Decoding real attestation objects and assertions into the typed model, and refusing malformed ones.
final class AttestationObjectParsingTests: XCTestCase {
    func testEveryRealAttestationDecodesToApplesStructure() throws {
        let vectors = try AppAttestVectors.all().filter { $0.kind == "attestation" }
        XCTAssertGreaterThanOrEqual(vectors.count, 12)
        for vector in vectors {
            let object = try AttestationObject(bytes: vector.data())
            XCTAssertEqual(object.format, "apple-appattest", vector.name)
            XCTAssertEqual(object.certificates.count, 2, vector.name)
            XCTAssertFalse(object.receipt.isEmpty, vector.name)
            let authData = object.authenticatorData
            XCTAssertEqual(authData.counter, 0, vector.name)
            XCTAssertEqual(authData.flags, 0x40, vector.name)
            if let rpIDHash = vector.rp_id_hash_b64 {
                XCTAssertEqual(authData.rpIDHash, TestBase64.decode(rpIDHash), vector.name)
            }
            let credential = try XCTUnwrap(authData.attestedCredential, vector.name)
            XCTAssertEqual(credential.aaguid, TestBase64.hex(try XCTUnwrap(vector.aaguid_hex)), vector.name)
            XCTAssertEqual(credential.credentialID, TestBase64.decode(try XCTUnwrap(vector.key_id_b64)), vector.name)
            // COSE_Key EC2 (RFC 9052 §7): kty 2, P-256 curve 1, 32-byte x and y.
            XCTAssertEqual(credential.credentialPublicKey[intKey: 1], .unsigned(2), vector.name)
            XCTAssertEqual(credential.credentialPublicKey[intKey: -2]?.bytesValue?.count, 32, vector.name)
        }
    }

    func testEveryRealAssertionDecodesWithItsCounter() throws {
        let vectors = try AppAttestVectors.all().filter { $0.kind == "assertion" }
        XCTAssertGreaterThanOrEqual(vectors.count, 10)
        for vector in vectors {
            let assertion = try AssertionObject(bytes: vector.data())
            XCTAssertEqual(assertion.authenticatorData.bytes.count, 37, vector.name)
            XCTAssertNil(assertion.authenticatorData.attestedCredential, vector.name)
            if let counter = vector.counter { XCTAssertEqual(assertion.authenticatorData.counter, counter, vector.name) }
            XCTAssertEqual(assertion.signature.first, 0x30, vector.name)
        }
    }

    func testAnAttestationWithAnotherFormatIsFmtUnexpected() throws {
        let bytes = attestationMap(fmt: .text("packed"))
        XCTAssertEqual(reason { try AttestationObject(bytes: bytes) }, "fmt_unexpected")
    }

    func testAnAttestationWithADuplicateAuthDataKeyIsMalformedCBOR() throws {
        var bytes = attestationMap(fmt: .text("apple-appattest"))
        bytes[0] = 0xa4  // four entries: append a second authData
        CBOREncoder.append(.text("authData"), to: &bytes)
        CBOREncoder.append(.bytes(minimalAuthData()), to: &bytes)
        XCTAssertEqual(reason { try AttestationObject(bytes: bytes) }, "malformed_cbor")
    }

    func testAnAttestationWithIndefiniteLengthsIsMalformedCBOR() throws {
        var bytes = attestationMap(fmt: .text("apple-appattest"))
        bytes[0] = 0xbf  // indefinite-length map …
        bytes.append(0xff)  // … closed by break
        XCTAssertEqual(reason { try AttestationObject(bytes: bytes) }, "malformed_cbor")
    }

    func testAnAttestationWithTrailingBytesIsMalformedCBOR() throws {
        let bytes = attestationMap(fmt: .text("apple-appattest")) + [0x00]
        XCTAssertEqual(reason { try AttestationObject(bytes: bytes) }, "malformed_cbor")
    }

    func testAnAttestationWithAnExtraTopLevelKeyIsMalformed() throws {
        var bytes = attestationMap(fmt: .text("apple-appattest"))
        bytes[0] = 0xa4
        CBOREncoder.append(.text("extra"), to: &bytes)
        CBOREncoder.append(.null, to: &bytes)
        XCTAssertEqual(reason { try AttestationObject(bytes: bytes) }, "malformed_attestation")
    }

    func testARealAttestationCutShortAnywhereIsRefusedWithoutTrapping() throws {
        let vector = try XCTUnwrap(AppAttestVectors.all().first { $0.kind == "attestation" })
        let bytes = try vector.data()
        for length in stride(from: 0, to: bytes.count, by: 7) {
            XCTAssertThrowsError(try AttestationObject(bytes: Array(bytes[0..<length])), "length \(length)")
        }
    }

    // MARK: helpers

    private func minimalAuthData() -> [UInt8] {
        var data = [UInt8](repeating: 0xaa, count: 32) + [0x40, 0, 0, 0, 0]
        data += Array("appattestdevelop".utf8) + [0x00, 0x01, 0x07]
        data += CBOREncoder.encode(.map([CBORMapEntry(key: .unsigned(1), value: .unsigned(2))]))
        return data
    }

    private func attestationMap(fmt: CBORValue) -> [UInt8] {
        CBOREncoder.encode(.map([
            CBORMapEntry(key: .text("fmt"), value: fmt),
            CBORMapEntry(key: .text("attStmt"), value: .map([
                CBORMapEntry(key: .text("x5c"), value: .array([.bytes([1]), .bytes([2])])),
                CBORMapEntry(key: .text("receipt"), value: .bytes([3])),
            ])),
            CBORMapEntry(key: .text("authData"), value: .bytes(minimalAuthData())),
        ]))
    }
}

/// The reason slug `body` throws, or nil if it does not throw an `AppAttestError`.
func reason<T>(_ body: () throws -> T) -> String? {
    do {
        _ = try body()
        return nil
    } catch let error as AppAttestError {
        return error.reason
    } catch {
        return "unexpected \(error)"
    }
}
