import AppAttest
import CBOR
import DeviceSimulator
import KeywardCrypto
import XCTest

/// Attestations from the device simulator under a test anchor with Apple's shape (P-384 root →
/// P-384 intermediate → P-256 credential certificate with the nonce extension), each breaking
/// exactly one thing, and the reason each is refused with.
final class SyntheticAttestationTests: XCTestCase {
    static let now: Int64 = 1_800_000_000
    static let teamID = "ABCDE12345"
    static let bundleID = "com.example.keyward"
    nonisolated(unsafe) static var sharedAnchor: TestTrustAnchor?

    let clientDataHash = SHA256.hash(Array("challenge".utf8))
    var now: Int64 { Self.now }

    func anchor() throws -> TestTrustAnchor {
        if let anchor = Self.sharedAnchor { return anchor }
        let anchor = try TestTrustAnchor.generate(validFrom: Self.now - 365 * 86400, validUntil: Self.now + 3650 * 86400)
        Self.sharedAnchor = anchor
        return anchor
    }

    func device(_ environment: SimulatedAppEnvironment = .production, anchor: TestTrustAnchor? = nil) throws -> SimulatedAppleDevice {
        try SimulatedAppleDevice(anchor: anchor ?? self.anchor(), teamID: Self.teamID, bundleID: Self.bundleID, environment: environment)
    }

    func verifier(_ environment: AppAttestEnvironment = .production, root: X509Certificate? = nil) throws -> AttestationVerifier {
        AttestationVerifier(teamID: Self.teamID, bundleIDs: [Self.bundleID], environment: environment,
                            trustedRoot: try root ?? anchor().root)
    }

    /// The reason `verify` refuses the attestation made with `knobs`, or nil if it accepts it.
    func refusal(_ knobs: AttestationKnobs, device: SimulatedAppleDevice? = nil, verifier: AttestationVerifier? = nil,
                 keyID: [UInt8]? = nil, clientDataHash: [UInt8]? = nil, at: Int64? = nil) throws -> String? {
        let device = try device ?? self.device()
        let attestation = try device.attestation(clientDataHash: self.clientDataHash, at: now, knobs: knobs)
        return reason {
            try (verifier ?? self.verifier()).verify(attestation: attestation, keyID: keyID ?? device.keyID,
                                                     clientDataHash: clientDataHash ?? self.clientDataHash, at: at ?? now)
        }
    }

    // MARK: accepted

    func testASimulatedAttestationVerifiesUnderItsTestAnchor() throws {
        let device = try self.device()
        let attestation = try device.attestation(clientDataHash: clientDataHash, at: now)
        let key = try verifier().verify(attestation: attestation, keyID: device.keyID, clientDataHash: clientDataHash, at: now)
        XCTAssertEqual(key.publicKey, device.publicKey)
        XCTAssertEqual(key.keyID, device.keyID)
        XCTAssertEqual(key.counter, 0)
        XCTAssertEqual(key.environment, .production)
        XCTAssertEqual(key.appID, "ABCDE12345.com.example.keyward")
        XCTAssertFalse(key.receipt.isEmpty)
    }

    func testADevelopmentDeviceVerifiesOnADevelopmentDeployment() throws {
        XCTAssertNil(try refusal(AttestationKnobs(), device: device(.development), verifier: verifier(.development)))
    }

    func testATrailingExtensionMapInAuthDataIsAcceptedWithOrWithoutTheEDFlag() throws {
        for flag in [false, true] {
            var knobs = AttestationKnobs()
            knobs.authDataExtensions = .map([CBORMapEntry(key: .text("appattest"), value: .bytes([1]))])
            knobs.extensionDataFlag = flag
            XCTAssertNil(try refusal(knobs))
        }
    }

    func testTheSimulatedChainIsUntrustedUnderApplesPinnedRoot() throws {
        XCTAssertEqual(try refusal(AttestationKnobs(), verifier: AttestationVerifier(teamID: Self.teamID, bundleIDs: [Self.bundleID],
                                                                                      environment: .production)), "chain_untrusted")
    }

    // MARK: Apple step 1 — the chain

    func testAnExpiredCredentialCertificateIsCertificateExpired() throws {
        var knobs = AttestationKnobs()
        knobs.leafValidity = (now - 10 * 86400)...(now - 86400)
        XCTAssertEqual(try refusal(knobs), "certificate_expired")
    }

    func testACredentialCertificateNotYetValidIsCertificateNotYetValid() throws {
        var knobs = AttestationKnobs()
        knobs.leafValidity = (now + 86400)...(now + 10 * 86400)
        XCTAssertEqual(try refusal(knobs), "certificate_not_yet_valid")
    }

    func testAnExpiredIntermediateIsCertificateExpired() throws {
        let anchor = try TestTrustAnchor.generate(rootValidity: (now - 86400 * 365)...(now + 86400 * 365),
                                                  intermediateValidity: (now - 86400 * 365)...(now - 86400))
        XCTAssertEqual(try refusal(AttestationKnobs(), device: device(anchor: anchor), verifier: verifier(root: anchor.root)),
                       "certificate_expired")
    }

    func testAnExpiredRootIsCertificateExpired() throws {
        let anchor = try TestTrustAnchor.generate(rootValidity: (now - 86400 * 365)...(now - 86400),
                                                  intermediateValidity: (now - 86400 * 365)...(now + 86400 * 365))
        XCTAssertEqual(try refusal(AttestationKnobs(), device: device(anchor: anchor), verifier: verifier(root: anchor.root)),
                       "certificate_expired")
    }

    func testARememberedIntermediateIsStillCheckedForExpiryAtEachVerification() throws {
        let anchor = try TestTrustAnchor.generate(rootValidity: (now - 86400 * 365)...(now + 86400 * 3650),
                                                  intermediateValidity: (now - 86400)...(now + 86400))
        let device = try self.device(anchor: anchor)
        let verifier = try self.verifier(root: anchor.root)
        var knobs = AttestationKnobs()
        knobs.leafValidity = (now - 3600)...(now + 10 * 86400)
        let attestation = try device.attestation(clientDataHash: clientDataHash, at: now, knobs: knobs)
        for _ in 0..<3 {
            XCTAssertNoThrow(try verifier.verify(attestation: attestation, keyID: device.keyID, clientDataHash: clientDataHash, at: now))
        }
        XCTAssertEqual(reason { try verifier.verify(attestation: attestation, keyID: device.keyID, clientDataHash: self.clientDataHash,
                                                    at: self.now + 2 * 86400) }, "certificate_expired")
    }

    func testAChainOfTheWrongLengthIsChainLengthInvalid() throws {
        let anchor = try self.anchor()
        var leafOnly = AttestationKnobs()
        leafOnly.certificatesAfterLeaf = []
        XCTAssertEqual(try refusal(leafOnly), "chain_length_invalid")
        var withRoot = AttestationKnobs()
        withRoot.certificatesAfterLeaf = [anchor.intermediate, anchor.root]
        XCTAssertEqual(try refusal(withRoot), "chain_length_invalid")
    }

    func testTheTrustedRootCarriedInsideX5CIsChainUntrusted() throws {
        let anchor = try self.anchor()
        var knobs = AttestationKnobs()
        knobs.leafIssuer = (anchor.root, anchor.rootKey)
        knobs.certificatesAfterLeaf = [anchor.root]
        XCTAssertEqual(try refusal(knobs), "chain_untrusted")
    }

    func testAnAttackersSelfSignedRootCarriedInsideX5CIsChainUntrusted() throws {
        let attacker = try TestTrustAnchor.generate(validFrom: now - 86400, validUntil: now + 86400)
        var knobs = AttestationKnobs()
        knobs.leafIssuer = (attacker.root, attacker.rootKey)
        knobs.certificatesAfterLeaf = [attacker.root]
        XCTAssertEqual(try refusal(knobs), "chain_untrusted")
    }

    func testAChainUnderAnotherRootIsChainUntrusted() throws {
        let other = try TestTrustAnchor.generate(validFrom: now - 86400, validUntil: now + 86400)
        XCTAssertEqual(try refusal(AttestationKnobs(), device: device(anchor: other)), "chain_untrusted")
    }

    func testACredentialCertificateSignedByTheWrongKeyIsChainUntrusted() throws {
        var knobs = AttestationKnobs()
        knobs.leafIssuer = (try anchor().intermediate, try ECPrivateKey.generate(.p384))
        XCTAssertEqual(try refusal(knobs), "chain_untrusted")
    }

    // MARK: Apple steps 2–4 — the nonce

    func testAMissingNonceExtensionIsNonceExtensionMissing() throws {
        var knobs = AttestationKnobs()
        knobs.nonceEncoding = .missing
        XCTAssertEqual(try refusal(knobs), "nonce_extension_missing")
    }

    func testALongFormDERNonceExtensionIsMalformed() throws {
        var knobs = AttestationKnobs()
        knobs.nonceEncoding = .longFormLength
        XCTAssertEqual(try refusal(knobs), "malformed_nonce_extension")
    }

    func testAnotherClientDataHashIsNonceMismatch() throws {
        XCTAssertEqual(try refusal(AttestationKnobs(), clientDataHash: SHA256.hash(Array("other".utf8))), "nonce_mismatch")
    }

    func testACertifiedNonceThatIsNotTheHashIsNonceMismatch() throws {
        var knobs = AttestationKnobs()
        knobs.nonce = [UInt8](repeating: 0x42, count: 32)
        XCTAssertEqual(try refusal(knobs), "nonce_mismatch")
    }

    // MARK: Apple step 5 — the key id

    func testAKeyIDThatIsNotTheHashOfTheCertifiedKeyIsKeyIDMismatch() throws {
        var knobs = AttestationKnobs()
        knobs.certifiedKey = try ECPrivateKey.generate(.p256).publicKey
        XCTAssertEqual(try refusal(knobs), "key_id_mismatch")
        XCTAssertEqual(try refusal(AttestationKnobs(), keyID: SHA256.hash([1, 2, 3])), "key_id_mismatch")
    }

    func testAP384CredentialKeyIsPublicKeyUnsupported() throws {
        var knobs = AttestationKnobs()
        knobs.certifiedKey = try ECPrivateKey.generate(.p384).publicKey
        XCTAssertEqual(try refusal(knobs), "public_key_unsupported")
    }

    func testANonECCredentialKeyIsPublicKeyUnsupported() throws {
        let anchor = try self.anchor()
        let device = try self.device()
        let attestation = try device.attestation(clientDataHash: clientDataHash, at: now)
        let leaf = try XCTUnwrap(AttestationObject(bytes: attestation).certificates.first)
        let rsaPEM = try RSAPrivateKey.generate(bits: 2048).publicKeyPEM
        let rsaSPKI = try XCTUnwrap(Base64.decode(rsaPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()))
        let rsaLeaf = try CertificateSurgery.replacingPublicKey(of: leaf, with: rsaSPKI, issuerKey: anchor.intermediateKey)
        let forged = try CertificateSurgery.replacingLeaf(in: attestation, with: rsaLeaf)
        let report = try verifier().inspect(attestation: forged, keyID: device.keyID, clientDataHash: clientDataHash, at: now)
        XCTAssertEqual(report.steps.first { $0.name == "certificate_chain" }?.outcome, .passed)
        XCTAssertEqual(report.steps.first { $0.name == "nonce" }?.outcome, .passed)
        XCTAssertEqual(reason { try self.verifier().verify(attestation: forged, keyID: device.keyID, clientDataHash: self.clientDataHash, at: self.now) },
                       "public_key_unsupported")
    }

    // MARK: Apple steps 6–9

    func testAnotherAppIDIsAppIDMismatch() throws {
        var knobs = AttestationKnobs()
        knobs.appID = "ABCDE12345.com.example.other"
        XCTAssertEqual(try refusal(knobs), "app_id_mismatch")
        knobs.appID = "ZZZZZ99999.com.example.keyward"
        XCTAssertEqual(try refusal(knobs), "app_id_mismatch")
    }

    func testANonZeroCounterIsCounterNotZero() throws {
        var knobs = AttestationKnobs()
        knobs.counter = 1
        XCTAssertEqual(try refusal(knobs), "counter_not_zero")
    }

    func testAProductionKeyOnADevelopmentDeploymentIsAAGUIDMismatch() throws {
        XCTAssertEqual(try refusal(AttestationKnobs(), device: device(.production), verifier: verifier(.development)), "aaguid_mismatch")
    }

    func testADevelopmentKeyOnAProductionDeploymentIsAAGUIDMismatch() throws {
        XCTAssertEqual(try refusal(AttestationKnobs(), device: device(.development), verifier: verifier(.production)), "aaguid_mismatch")
    }

    func testAAGUIDVariantsAreRefusedByteForByte() throws {
        let variants: [[UInt8]] = [
            Array("appattest".utf8) + [UInt8](repeating: 0x20, count: 7),  // "appattest" padded with spaces, not zeros
            Array("APPATTEST".utf8) + [UInt8](repeating: 0, count: 7),  // other case
            Array("appattest".utf8) + [0, 0, 0, 0, 0, 0, 1],  // last byte non-zero
            Array("Appattestdevelop".utf8),
            [UInt8](repeating: 0, count: 16),
        ]
        for aaguid in variants {
            var knobs = AttestationKnobs()
            knobs.aaguid = aaguid
            XCTAssertEqual(try refusal(knobs), "aaguid_mismatch", "\(aaguid)")
            XCTAssertEqual(try refusal(knobs, device: device(.development), verifier: verifier(.development)), "aaguid_mismatch", "\(aaguid)")
        }
    }

    func testAnAAGUIDOfJustAppattestWithoutTheZeroBytesIsRefused() throws {
        // Nine bytes where sixteen belong shift every later field: the parse fails, or, if the shifted
        // bytes happen to parse, the AAGUID step does. Either way it never passes.
        for _ in 0..<8 {
            var knobs = AttestationKnobs()
            knobs.aaguid = Array("appattest".utf8)
            let refused = try refusal(knobs)
            XCTAssertTrue(["malformed_auth_data", "aaguid_mismatch"].contains(refused ?? "accepted"), refused ?? "accepted")
        }
    }

    func testACredentialIDThatIsNotTheKeyIDIsCredentialIDMismatch() throws {
        var knobs = AttestationKnobs()
        knobs.credentialID = [UInt8](repeating: 7, count: 32)
        XCTAssertEqual(try refusal(knobs), "credential_id_mismatch")
    }

    // MARK: decoding

    func testAnotherFormatIsFmtUnexpected() throws {
        var knobs = AttestationKnobs()
        knobs.format = "packed"
        XCTAssertEqual(try refusal(knobs), "fmt_unexpected")
    }

    func testAttestationCBORWithADuplicateAuthDataKeyIndefiniteLengthsOrTrailingBytesIsMalformedCBOR() throws {
        let device = try self.device()
        let attestation = try device.attestation(clientDataHash: clientDataHash, at: now)
        XCTAssertEqual(attestation.first, 0xa3)
        var duplicate = attestation
        duplicate[0] = 0xa4
        CBOREncoder.append(.text("authData"), to: &duplicate)
        CBOREncoder.append(.bytes([0]), to: &duplicate)
        var indefinite = attestation
        indefinite[0] = 0xbf
        indefinite.append(0xff)
        for (label, bytes) in [("duplicate", duplicate), ("indefinite", indefinite), ("trailing", attestation + [0x00])] {
            XCTAssertEqual(reason { try self.verifier().verify(attestation: bytes, keyID: device.keyID, clientDataHash: self.clientDataHash, at: self.now) },
                           "malformed_cbor", label)
        }
    }

    func testInspectReportsEveryStepAndAgreesWithVerify() throws {
        var knobs = AttestationKnobs()
        knobs.counter = 5
        knobs.credentialID = [UInt8](repeating: 7, count: 32)
        let device = try self.device()
        let attestation = try device.attestation(clientDataHash: clientDataHash, at: now, knobs: knobs)
        let report = try verifier().inspect(attestation: attestation, keyID: device.keyID, clientDataHash: clientDataHash, at: now)
        XCTAssertEqual(report.steps.map(\.name), ["decode", "certificate_chain", "nonce", "key_id", "app_id", "counter", "aaguid", "credential_id"])
        XCTAssertEqual(report.firstFailure?.reason, "counter_not_zero")
        XCTAssertEqual(report.steps.compactMap { step -> String? in
            if case .failed(let error) = step.outcome { return error.reason }
            return nil
        }, ["counter_not_zero", "credential_id_mismatch"])
        XCTAssertFalse(report.isValid)
    }
}
