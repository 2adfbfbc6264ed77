import AppAttest
import DeviceSimulator
import KeywardCrypto
import XCTest

/// Assertions from the device simulator, each breaking exactly one thing, and the reason each is refused with.
final class SyntheticAssertionTests: XCTestCase {
    static let teamID = "ABCDE12345"
    nonisolated(unsafe) static var sharedAnchor: TestTrustAnchor?

    let clientDataHash = SHA256.hash(Array("GET\n/p/maps/v1\n47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU\n1800000000".utf8))
    let verifier = AssertionVerifier(teamID: "ABCDE12345", bundleIDs: ["com.example.keyward", "com.example.other"])
    let appID = "ABCDE12345.com.example.keyward"

    func device() throws -> SimulatedAppleDevice {
        let anchor = try Self.sharedAnchor ?? TestTrustAnchor.generate(validFrom: 0, validUntil: 4_000_000_000)
        Self.sharedAnchor = anchor
        return try SimulatedAppleDevice(anchor: anchor, teamID: Self.teamID, bundleID: "com.example.keyward", environment: .production)
    }

    func testSuccessiveAssertionsVerifyWithIncreasingCounters() throws {
        let device = try self.device()
        var stored: UInt32 = 0
        for expected: UInt32 in 1...3 {
            let assertion = try device.assertion(clientDataHash: clientDataHash)
            stored = try verifier.verify(assertion: assertion, publicKey: device.publicKey, clientDataHash: clientDataHash,
                                         storedCounter: stored, appID: appID)
            XCTAssertEqual(stored, expected)
        }
        XCTAssertEqual(device.counter, 3)
    }

    func testAnAssertionWithoutAnAppIDAcceptsAnyConfiguredApp() throws {
        let device = try self.device()
        let assertion = try device.assertion(clientDataHash: clientDataHash)
        XCTAssertEqual(try verifier.verify(assertion: assertion, publicKey: device.publicKey, clientDataHash: clientDataHash,
                                           storedCounter: 0, appID: nil), 1)
    }

    func testACounterEqualToTheStoredOneIsCounterReplay() throws {
        let device = try self.device()
        let assertion = try device.assertion(clientDataHash: clientDataHash)
        XCTAssertEqual(reason { try self.verifier.verify(assertion: assertion, publicKey: device.publicKey, clientDataHash: self.clientDataHash,
                                                         storedCounter: 1, appID: self.appID) }, "counter_replay")
    }

    func testACounterBelowTheStoredOneIsCounterReplay() throws {
        let device = try self.device()
        var knobs = AssertionKnobs()
        knobs.counter = 4
        let assertion = try device.assertion(clientDataHash: clientDataHash, knobs: knobs)
        XCTAssertEqual(reason { try self.verifier.verify(assertion: assertion, publicKey: device.publicKey, clientDataHash: self.clientDataHash,
                                                         storedCounter: 9, appID: self.appID) }, "counter_replay")
    }

    func testASignatureOverTheNonceAsAPrehashedDigestIsSignatureInvalid() throws {
        let device = try self.device()
        var knobs = AssertionKnobs()
        knobs.signNonceAsDigest = true
        let assertion = try device.assertion(clientDataHash: clientDataHash, knobs: knobs)
        XCTAssertEqual(reason { try self.verifier.verify(assertion: assertion, publicKey: device.publicKey, clientDataHash: self.clientDataHash,
                                                         storedCounter: 0, appID: self.appID) }, "signature_invalid")
    }

    func testASignatureByAnotherKeyIsSignatureInvalid() throws {
        let device = try self.device()
        var knobs = AssertionKnobs()
        knobs.signingKey = try ECPrivateKey.generate(.p256)
        let assertion = try device.assertion(clientDataHash: clientDataHash, knobs: knobs)
        XCTAssertEqual(reason { try self.verifier.verify(assertion: assertion, publicKey: device.publicKey, clientDataHash: self.clientDataHash,
                                                         storedCounter: 0, appID: self.appID) }, "signature_invalid")
    }

    func testARememberedKeyNeverVerifiesAnotherDevicesAssertion() throws {
        let first = try self.device(), second = try self.device()
        let own = try first.assertion(clientDataHash: clientDataHash)
        XCTAssertEqual(try verifier.verify(assertion: own, publicKey: first.publicKey, clientDataHash: clientDataHash, storedCounter: 0, appID: appID), 1)
        let foreign = try second.assertion(clientDataHash: clientDataHash)
        XCTAssertEqual(reason { try self.verifier.verify(assertion: foreign, publicKey: first.publicKey, clientDataHash: self.clientDataHash,
                                                         storedCounter: 0, appID: self.appID) }, "signature_invalid")
    }

    func testAnotherClientDataHashIsSignatureInvalid() throws {
        let device = try self.device()
        let assertion = try device.assertion(clientDataHash: clientDataHash)
        XCTAssertEqual(reason { try self.verifier.verify(assertion: assertion, publicKey: device.publicKey, clientDataHash: SHA256.hash([1]),
                                                         storedCounter: 0, appID: self.appID) }, "signature_invalid")
    }

    func testAnotherAppIDIsAppIDMismatch() throws {
        let device = try self.device()
        var knobs = AssertionKnobs()
        knobs.appID = "ABCDE12345.com.example.unknown"
        let unknown = try device.assertion(clientDataHash: clientDataHash, knobs: knobs)
        XCTAssertEqual(reason { try self.verifier.verify(assertion: unknown, publicKey: device.publicKey, clientDataHash: self.clientDataHash,
                                                         storedCounter: 0, appID: nil) }, "app_id_mismatch")
        // Configured, but not the App ID this device attested for.
        knobs.appID = "ABCDE12345.com.example.other"
        let other = try device.assertion(clientDataHash: clientDataHash, knobs: knobs)
        XCTAssertEqual(reason { try self.verifier.verify(assertion: other, publicKey: device.publicKey, clientDataHash: self.clientDataHash,
                                                         storedCounter: 0, appID: self.appID) }, "app_id_mismatch")
    }

    func testAPublicKeyThatIsNotA65BytePoint256IsPublicKeyUnsupported() throws {
        let device = try self.device()
        let assertion = try device.assertion(clientDataHash: clientDataHash)
        for key in [Array(device.publicKey.dropLast()), try ECPrivateKey.generate(.p384).publicKey.x962, [UInt8](repeating: 4, count: 65)] {
            XCTAssertEqual(reason { try self.verifier.verify(assertion: assertion, publicKey: key, clientDataHash: self.clientDataHash,
                                                             storedCounter: 0, appID: self.appID) }, "public_key_unsupported")
        }
    }

    func testInspectListsTheSignatureAppIDAndCounterSteps() throws {
        let device = try self.device()
        let assertion = try device.assertion(clientDataHash: clientDataHash)
        let report = verifier.inspect(assertion: assertion, publicKey: device.publicKey, clientDataHash: clientDataHash,
                                      storedCounter: 1, appID: appID)
        XCTAssertEqual(report.steps.map(\.name), ["decode", "signature", "app_id", "counter"])
        XCTAssertEqual(report.firstFailure?.reason, "counter_replay")
    }
}
