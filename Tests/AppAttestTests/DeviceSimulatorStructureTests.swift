import AppAttest
import CBOR
import DeviceSimulator
import KeywardCrypto
import XCTest

/// The simulator's output has the structure of a real device's: compared field by field with a
/// real attestation and assertion from the vectors.
final class DeviceSimulatorStructureTests: XCTestCase {
    func testASimulatedAttestationHasTheShapeOfARealOne() throws {
        let real = try AttestationObject(bytes: XCTUnwrap(AppAttestVectors.all().first { $0.name == "devicecheck-appattest/params.json#0" }).data())
        let anchor = try TestTrustAnchor.generate(validFrom: 1_700_000_000, validUntil: 1_900_000_000)
        let device = try SimulatedAppleDevice(anchor: anchor, teamID: "6MURL8TA57", bundleID: "de.vincent-haupert.apple-appattest-poc",
                                              environment: .development)
        let bytes = try device.attestation(clientDataHash: SHA256.hash([1]), at: 1_800_000_000)
        let simulated = try AttestationObject(bytes: bytes)

        // Same top-level keys in the same order as the real object.
        let keys = { (data: [UInt8]) throws -> [CBORValue] in try XCTUnwrap(CBORDecoder().decode(data).mapEntries).map(\.key) }
        XCTAssertEqual(try keys(bytes), [.text("fmt"), .text("attStmt"), .text("authData")])
        XCTAssertEqual(simulated.format, real.format)
        XCTAssertEqual(simulated.certificates.count, real.certificates.count)
        XCTAssertEqual(simulated.authenticatorData.rpIDHash, real.authenticatorData.rpIDHash)
        XCTAssertEqual(simulated.authenticatorData.flags, real.authenticatorData.flags)
        XCTAssertEqual(simulated.authenticatorData.counter, 0)
        XCTAssertEqual(simulated.authenticatorData.attestedCredential?.aaguid, real.authenticatorData.attestedCredential?.aaguid)
        XCTAssertEqual(simulated.authenticatorData.attestedCredential?.credentialID, device.keyID)
        XCTAssertEqual(simulated.authenticatorData.bytes.count, real.authenticatorData.bytes.count)

        // COSE_Key carries the device key; the credential certificate certifies it, P-256, under the intermediate.
        let cose = try XCTUnwrap(simulated.authenticatorData.attestedCredential?.credentialPublicKey)
        XCTAssertEqual([0x04] + (cose[intKey: -2]?.bytesValue ?? []) + (cose[intKey: -3]?.bytesValue ?? []), device.publicKey)
        let leaf = try X509Certificate(der: simulated.certificates[0])
        XCTAssertEqual(try leaf.publicKey().x962, device.publicKey)
        XCTAssertEqual(simulated.certificates[1], anchor.intermediate.der)
        XCTAssertEqual(try anchor.intermediate.publicKey().curve, .p384)
        XCTAssertEqual(try anchor.root.publicKey().curve, .p384)
        XCTAssertEqual(SHA256.hash(device.publicKey), device.keyID)
    }

    func testASimulatedAssertionHasTheShapeOfARealOne() throws {
        let real = try AssertionObject(bytes: XCTUnwrap(AppAttestVectors.all().first { $0.name == "devicecheck-appattest/params.json#1" }).data())
        let anchor = try TestTrustAnchor.generate(validFrom: 1_700_000_000, validUntil: 1_900_000_000)
        let device = try SimulatedAppleDevice(anchor: anchor, teamID: "6MURL8TA57", bundleID: "de.vincent-haupert.apple-appattest-poc",
                                              environment: .development)
        let bytes = try device.assertion(clientDataHash: SHA256.hash([1]))
        let simulated = try AssertionObject(bytes: bytes)
        XCTAssertEqual(try XCTUnwrap(CBORDecoder().decode(bytes).mapEntries).map(\.key), [.text("signature"), .text("authenticatorData")])
        XCTAssertEqual(simulated.authenticatorData.bytes.count, real.authenticatorData.bytes.count)
        XCTAssertEqual(simulated.authenticatorData.rpIDHash, real.authenticatorData.rpIDHash)
        XCTAssertEqual(simulated.authenticatorData.flags, real.authenticatorData.flags)
        XCTAssertEqual(simulated.authenticatorData.counter, 1)
        XCTAssertEqual(simulated.signature.first, 0x30)
    }
}
