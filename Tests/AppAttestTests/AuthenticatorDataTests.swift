import AppAttest
import CBOR
import XCTest

/// authenticatorData layout rules: fixed fields, credential data, the optional trailing extension map.
final class AuthenticatorDataTests: XCTestCase {
    private let rpIDHash = [UInt8](repeating: 0x11, count: 32)
    private let coseKey = CBOREncoder.encode(.map([CBORMapEntry(key: .unsigned(1), value: .unsigned(2))]))
    private let extensionMap = CBOREncoder.encode(.map([CBORMapEntry(key: .text("ext"), value: .bytes([1, 2]))]))

    private func attestationData(flags: UInt8 = 0x40, credentialID: [UInt8] = [UInt8](repeating: 9, count: 32),
                                 declaredLength: Int? = nil, tail: [UInt8] = []) -> [UInt8] {
        let length = declaredLength ?? credentialID.count
        return rpIDHash + [flags, 0, 0, 0, 0] + Array("appattestdevelop".utf8)
            + [UInt8(length >> 8), UInt8(length & 0xff)] + credentialID + coseKey + tail
    }

    func testParsesFixedFieldsCredentialDataAndCounter() throws {
        var bytes = attestationData()
        bytes[33...36] = [0x01, 0x02, 0x03, 0x04]
        let data = try AuthenticatorData(bytes: bytes, layout: .attestation)
        XCTAssertEqual(data.rpIDHash, rpIDHash)
        XCTAssertEqual(data.flags, 0x40)
        XCTAssertEqual(data.counter, 0x0102_0304)
        XCTAssertEqual(data.attestedCredential?.aaguid, Array("appattestdevelop".utf8))
        XCTAssertEqual(data.attestedCredential?.credentialID, [UInt8](repeating: 9, count: 32))
        XCTAssertNil(data.extensions)
        XCTAssertEqual(data.bytes, bytes)
    }

    func testATrailingExtensionMapIsAcceptedWithOrWithoutTheEDFlag() throws {
        for flags: UInt8 in [0x40, 0xc0] {
            let data = try AuthenticatorData(bytes: attestationData(flags: flags, tail: extensionMap), layout: .attestation)
            XCTAssertEqual(data.extensions?[textKey: "ext"], .bytes([1, 2]))
        }
        let assertion = try AuthenticatorData(bytes: rpIDHash + [0x40, 0, 0, 0, 1] + extensionMap, layout: .assertion)
        XCTAssertEqual(assertion.counter, 1)
        XCTAssertNotNil(assertion.extensions)
    }

    func testAnythingAfterTheExtensionMapIsRefused() {
        let bytes = attestationData(tail: extensionMap + [0x00])
        XCTAssertEqual(reason { try AuthenticatorData(bytes: bytes, layout: .attestation) }, "malformed_auth_data")
    }

    func testATrailingItemThatIsNotAMapIsRefused() {
        let bytes = rpIDHash + [0x40, 0, 0, 0, 1] + CBOREncoder.encode(.array([]))
        XCTAssertEqual(reason { try AuthenticatorData(bytes: bytes, layout: .assertion) }, "malformed_auth_data")
    }

    func testTheEDFlagWithoutExtensionsIsRefused() {
        XCTAssertEqual(reason { try AuthenticatorData(bytes: rpIDHash + [0xc0, 0, 0, 0, 1], layout: .assertion) }, "malformed_auth_data")
    }

    func testACredentialIdLengthBeyondTheBufferIsRefused() {
        let bytes = attestationData(declaredLength: 0xffff)
        XCTAssertEqual(reason { try AuthenticatorData(bytes: bytes, layout: .attestation) }, "malformed_auth_data")
    }

    func testAnAttestationWithoutTheATFlagIsRefused() {
        XCTAssertEqual(reason { try AuthenticatorData(bytes: attestationData(flags: 0x00), layout: .attestation) }, "malformed_auth_data")
    }

    func testDataShorterThan37BytesIsRefused() {
        XCTAssertEqual(reason { try AuthenticatorData(bytes: [UInt8](repeating: 0, count: 36), layout: .assertion) }, "malformed_auth_data")
    }

    func testEveryTruncationOfAnAttestationAuthDataIsRefused() {
        let bytes = attestationData(tail: extensionMap)
        for length in 0..<bytes.count {
            let cut = Array(bytes[0..<length])
            // Cutting exactly before the extension map leaves a valid, shorter authData.
            if length == bytes.count - extensionMap.count { continue }
            XCTAssertEqual(reason { try AuthenticatorData(bytes: cut, layout: .attestation) }, "malformed_auth_data", "length \(length)")
        }
    }
}
