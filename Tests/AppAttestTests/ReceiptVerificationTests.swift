import AppAttest
import DeviceSimulator
import KeywardCrypto
import XCTest

/// Receipts from the real attestation vectors parse and verify under the pinned Apple Root CA - G3;
/// each mutation is refused for its own reason; receipts minted under a test chain exercise the
/// field rules a real receipt cannot reach without breaking its signature.
final class ReceiptVerificationTests: XCTestCase {
    struct RealReceipt {
        let vector: AppAttestVector
        let object: AttestationObject
        var receipt: [UInt8] { object.receipt }
        /// A minute after Apple made the receipt: within its signing certificate's validity (the
        /// attestation's verify_at_unix can be after it, or before the receipt was made).
        let at: Int64
    }

    func realReceipts() throws -> [RealReceipt] {
        try AppAttestVectors.all().filter { $0.kind == "attestation" && $0.isValid }.map { vector in
            let object = try AttestationObject(bytes: vector.data())
            let created = try XCTUnwrap(ReceiptVerifier().inspect(receipt: object.receipt, at: 0, binding: nil).fields, vector.name).creationTime
            return RealReceipt(vector: vector, object: object, at: created + 60)
        }
    }

    func apple() throws -> RealReceipt {
        try XCTUnwrap(try realReceipts().first { $0.vector.name.hasPrefix("apple-sample-2024") })
    }

    func testPinnedRootIsApplesPublishedRootCAG3() {
        XCTAssertEqual(Hex.encode(AppleRootCAG3.certificate.sha256Fingerprint),
                       "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
        XCTAssertEqual(AppleRootCAG3.certificate.subject, "C=US,O=Apple Inc.,OU=Apple Certification Authority,CN=Apple Root CA - G3")
        XCTAssertTrue(AppleRootCAG3.certificate.isSelfSigned)
    }

    func testEveryRealReceiptVerifiesAndMatchesItsAttestation() throws {
        let receipts = try realReceipts()
        XCTAssertEqual(receipts.count, 14)
        let verifier = ReceiptVerifier()
        for real in receipts {
            let appID = try XCTUnwrap(real.vector.receipt_app_id)
            let binding = try ReceiptBinding.attestation(real.object, appID: appID, clientDataHash: try real.vector.clientDataHash())
            let fields = try verifier.verify(receipt: real.receipt, at: real.at, binding: binding)
            XCTAssertEqual(fields.appID, appID, real.vector.name)
            XCTAssertEqual(fields.kind, .attest, real.vector.name)
            XCTAssertNil(fields.riskMetric, real.vector.name)
            XCTAssertEqual(fields.attestedKeyCertificate, real.object.certificates[0], real.vector.name)
            XCTAssertEqual(fields.clientHash, try real.vector.clientDataHash(), real.vector.name)
            XCTAssertEqual(fields.environment, real.vector.environment == "production" ? "production" : "sandbox", real.vector.name)
            // Apple's receipts expire 90 days after they are made.
            XCTAssertEqual(fields.expirationTime - fields.creationTime, 90 * 86_400, real.vector.name)
            // inspect agrees.
            let (report, _) = verifier.inspect(receipt: real.receipt, at: real.at, binding: binding)
            XCTAssertTrue(report.isValid, "\(real.vector.name): \(String(describing: report.firstFailure))")
        }
    }

    func testApplesSampleReceiptFieldsAreTheDocumentedOnes() throws {
        let real = try apple()
        let fields = try ReceiptVerifier().verify(receipt: real.receipt, at: real.at)
        XCTAssertEqual(fields.appID, "0352187391.com.apple.example_app_attest")
        XCTAssertEqual(fields.clientHash, Array("test_server_challenge".utf8))
        XCTAssertEqual(fields.creationTime, 1_713_456_894)  // 2024-04-18T16:14:54.209Z
        XCTAssertEqual(fields.expirationTime, 1_721_232_894)  // 2024-07-17T16:14:54.209Z
        XCTAssertEqual(fields.environment, "production")
        XCTAssertNil(fields.notBefore)
        XCTAssertEqual(fields.token.count, 88)
    }

    func testAppIDNotTheAttestedOneIsRefused() throws {
        let real = try apple()
        let binding = try ReceiptBinding.attestation(real.object, appID: "WRONGTEAMID.com.apple.example_app_attest", clientDataHash: nil)
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: real.receipt, at: real.at, binding: binding) },
                       "receipt_app_id_mismatch")
    }

    func testReceiptOfAnotherKeyIsRefused() throws {
        // Two attestations of the same app (same App ID) by different keys: the receipt of one
        // against the attestation of the other.
        let receipts = try realReceipts().filter { $0.vector.name.hasPrefix("devicecheck-appattest") }
        XCTAssertGreaterThanOrEqual(receipts.count, 2)
        let binding = try ReceiptBinding.attestation(receipts[1].object, appID: receipts[1].vector.receipt_app_id, clientDataHash: nil)
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: receipts[0].receipt, at: receipts[0].at, binding: binding) },
                       "receipt_key_mismatch")
        let device = ReceiptBinding.device(appID: try XCTUnwrap(receipts[0].vector.receipt_app_id),
                                           publicKey: try receipts[1].vector.publicKeyX962(), environment: .development)
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: receipts[0].receipt, at: receipts[0].at, binding: device) },
                       "receipt_key_mismatch")
    }

    func testAlteredSignatureOrContentIsRefused() throws {
        let real = try apple()
        var signature = real.receipt
        // Apple's envelope is BER with indefinite lengths: it ends with three end-of-contents
        // markers (six zero bytes), right after the last byte of the signer's ECDSA signature.
        XCTAssertEqual(Array(signature.suffix(6)), [0, 0, 0, 0, 0, 0])
        signature[signature.count - 7] ^= 0x01
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: signature, at: real.at) }, "receipt_signature_invalid")
        var content = real.receipt
        let appID = Array("0352187391".utf8)
        let offset = try XCTUnwrap(content.firstRange(of: appID)).lowerBound
        content[offset] = UInt8(ascii: "9")  // the App ID's first digit, inside the signed content
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: content, at: real.at) }, "receipt_signature_invalid")
    }

    func testExpiredReceiptIsRefusedWhileItsCertificatesAreStillValid() throws {
        let real = try apple()
        let fields = try ReceiptVerifier().verify(receipt: real.receipt, at: real.at)
        XCTAssertNoThrow(try ReceiptVerifier().verify(receipt: real.receipt, at: fields.expirationTime))
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: real.receipt, at: fields.expirationTime + 1) }, "receipt_expired")
        // After the signing certificate's notAfter (2025-03-28) the chain fails first.
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: real.receipt, at: 1_743_465_600) }, "receipt_certificate_expired")
    }

    /// A receipt is not valid before Apple made it, though its certificates already were: the
    /// appattest-checker-node receipt was created on 2024-01-27, a day after its signing chain and
    /// the attestation's credential certificate became valid.
    func testReceiptIsRefusedBeforeItsCreationTimeWhileItsCertificatesAreValid() throws {
        let real = try XCTUnwrap(try realReceipts().first { $0.vector.name.hasPrefix("appattest-checker-node") })
        let fields = try ReceiptVerifier().verify(receipt: real.receipt, at: real.at)
        XCTAssertEqual(fields.creationTime, 1_706_372_133)   // 2024-01-27T16:15:33Z
        let aDayBefore: Int64 = 1_706_289_333
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: real.receipt, at: aDayBefore) }, "receipt_before_creation")
        let leeway = ReceiptVerifier.creationLeewaySeconds
        XCTAssertEqual(leeway, 60)
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: real.receipt, at: fields.creationTime - leeway - 1) }, "receipt_before_creation")
        XCTAssertNoThrow(try ReceiptVerifier().verify(receipt: real.receipt, at: fields.creationTime - leeway), "a clock a minute behind Apple's")
        XCTAssertNoThrow(try ReceiptVerifier().verify(receipt: real.receipt, at: fields.creationTime))
        // inspect reports the step on its own, with the chain passing at that time.
        let report = ReceiptVerifier().inspect(receipt: real.receipt, at: aDayBefore, binding: nil).report
        XCTAssertEqual(report.steps.first { $0.name == "certificate_chain" }?.outcome, .passed)
        guard case .failed(let error)? = report.steps.first(where: { $0.name == "creation" })?.outcome else {
            return XCTFail("the creation step did not fail")
        }
        XCTAssertEqual(error.reason, "receipt_before_creation")
    }

    func testReceiptUnderAnotherRootIsRefused() throws {
        let real = try apple()
        let verifier = ReceiptVerifier(trustedRoot: AppleAppAttestationRoot.certificate)
        XCTAssertEqual(reason { try verifier.verify(receipt: real.receipt, at: real.at) }, "receipt_chain_untrusted")
    }

    func testNotAReceiptIsMalformed() {
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: Array("keyward-simulated-receipt".utf8), at: 0) }, "receipt_malformed")
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: [], at: 0) }, "receipt_malformed")
    }

    // MARK: minted under a test chain

    let now: Int64 = 1_800_000_000

    func minted() throws -> (signer: TestReceiptSigner, device: SimulatedAppleDevice, object: AttestationObject, clientDataHash: [UInt8]) {
        let signer = try TestReceiptSigner.generate(validFrom: now - 86_400, validUntil: now + 365 * 86_400)
        let anchor = try TestTrustAnchor.generate(validFrom: now - 86_400, validUntil: now + 365 * 86_400)
        let device = try SimulatedAppleDevice(anchor: anchor, teamID: "ABCDE12345", bundleID: "com.example.app",
                                              environment: .production, receiptSigner: signer)
        let clientDataHash = SHA256.hash(Array("challenge".utf8))
        let object = try AttestationObject(bytes: device.attestation(clientDataHash: clientDataHash, at: now))
        return (signer, device, object, clientDataHash)
    }

    func testMintedAttestReceiptVerifiesAndMatches() throws {
        let (signer, device, object, clientDataHash) = try minted()
        let binding = try ReceiptBinding.attestation(object, appID: device.appID, clientDataHash: clientDataHash)
        let fields = try ReceiptVerifier(trustedRoot: signer.root).verify(receipt: object.receipt, at: now, binding: binding)
        XCTAssertEqual(fields.appID, "ABCDE12345.com.example.app")
        XCTAssertEqual(fields.creationTime, now)
        // The production anchor refuses it.
        XCTAssertEqual(reason { try ReceiptVerifier().verify(receipt: object.receipt, at: now) }, "receipt_chain_untrusted")
    }

    func testMintedRefreshedReceiptCarriesItsRiskMetric() throws {
        let (signer, device, object, _) = try minted()
        let receipt = try signer.refreshedReceipt(appID: device.appID, credentialCertificate: object.certificates[0], riskMetric: 7,
                                                  environment: "production", createdAt: now, notBefore: now + 86_400,
                                                  expiresAt: now + 90 * 86_400)
        let binding = ReceiptBinding.device(appID: device.appID, publicKey: device.publicKey, environment: .production)
        let fields = try ReceiptVerifier(trustedRoot: signer.root).verify(receipt: receipt, at: now, binding: binding)
        XCTAssertEqual(fields.kind, .receipt)
        XCTAssertEqual(fields.riskMetric, 7)
        XCTAssertEqual(fields.notBefore, now + 86_400)
        // A refreshed receipt is not what an attestation carries.
        let attestation = try ReceiptBinding.attestation(object, appID: device.appID, clientDataHash: nil)
        XCTAssertEqual(reason { try ReceiptVerifier(trustedRoot: signer.root).verify(receipt: receipt, at: now, binding: attestation) },
                       "receipt_type_unexpected")
        // Another device's App ID.
        let other = ReceiptBinding.device(appID: "ABCDE12345.com.example.other", publicKey: device.publicKey, environment: .production)
        XCTAssertEqual(reason { try ReceiptVerifier(trustedRoot: signer.root).verify(receipt: receipt, at: now, binding: other) },
                       "receipt_app_id_mismatch")
        // The wrong environment.
        let sandbox = ReceiptBinding.device(appID: device.appID, publicKey: device.publicKey, environment: .development)
        XCTAssertEqual(reason { try ReceiptVerifier(trustedRoot: signer.root).verify(receipt: receipt, at: now, binding: sandbox) },
                       "receipt_environment_mismatch")
    }

    func testMintedReceiptWithAnotherAppIDIsRefusedByTheRPIDHash() throws {
        let (signer, _, object, clientDataHash) = try minted()
        let receipt = try signer.attestReceipt(appID: "ABCDE12345.com.example.other", credentialCertificate: object.certificates[0],
                                               clientHash: clientDataHash, environment: "production", createdAt: now,
                                               expiresAt: now + 86_400)
        let binding = try ReceiptBinding.attestation(object, appID: nil, clientDataHash: nil)
        XCTAssertEqual(reason { try ReceiptVerifier(trustedRoot: signer.root).verify(receipt: receipt, at: now, binding: binding) },
                       "receipt_app_id_mismatch")
    }

    func testMintedReceiptWithAnotherClientHashIsRefusedByTheNonce() throws {
        let (signer, device, object, _) = try minted()
        let receipt = try signer.attestReceipt(appID: device.appID, credentialCertificate: object.certificates[0],
                                               clientHash: SHA256.hash(Array("other".utf8)), environment: "production",
                                               createdAt: now, expiresAt: now + 86_400)
        let binding = try ReceiptBinding.attestation(object, appID: device.appID, clientDataHash: nil)
        XCTAssertEqual(reason { try ReceiptVerifier(trustedRoot: signer.root).verify(receipt: receipt, at: now, binding: binding) },
                       "receipt_client_hash_mismatch")
    }

    func testSignerWithoutApplesMarkerIsRefused() throws {
        let signer = try TestReceiptSigner.generate(validFrom: now - 86_400, validUntil: now + 86_400, markSigner: false)
        let receipt = try signer.receipt(fields: [(6, Array("ATTEST".utf8))])
        XCTAssertEqual(reason { try ReceiptVerifier(trustedRoot: signer.root).verify(receipt: receipt, at: now) }, "receipt_signer_unexpected")
    }

    func testFieldRules() throws {
        let signer = try TestReceiptSigner.generate(validFrom: now - 86_400, validUntil: now + 86_400)
        let verifier = ReceiptVerifier(trustedRoot: signer.root)
        let base: [(type: Int, value: [UInt8])] = [
            (2, Array("T.b".utf8)), (3, [0x30]), (4, [1]), (5, [2]), (6, Array("ATTEST".utf8)),
            (12, TestReceiptSigner.time(now)), (21, TestReceiptSigner.time(now + 60)),
        ]
        XCTAssertNoThrow(try verifier.verify(receipt: signer.receipt(fields: base), at: now))
        // Unknown fields are ignored.
        XCTAssertNoThrow(try verifier.verify(receipt: signer.receipt(fields: base + [(99, [1, 2, 3])]), at: now))
        let cases: [(String, [(type: Int, value: [UInt8])], String)] = [
            ("missing App ID", base.filter { $0.type != 2 }, "receipt_fields_malformed"),
            ("field twice", base + [(5, [3])], "receipt_fields_malformed"),
            ("bad time", base.map { $0.type == 12 ? (12, Array("2024-02-30T00:00:00Z".utf8)) : $0 }, "receipt_fields_malformed"),
            ("unknown type", base.map { $0.type == 6 ? (6, Array("OTHER".utf8)) : $0 }, "receipt_type_unexpected"),
            ("RECEIPT without metric", base.map { $0.type == 6 ? (6, Array("RECEIPT".utf8)) : $0 }, "receipt_fields_malformed"),
            ("metric not decimal", base.map { $0.type == 6 ? (6, Array("RECEIPT".utf8)) : $0 } + [(17, Array("-1".utf8))],
             "receipt_fields_malformed"),
        ]
        for (name, fields, expected) in cases {
            XCTAssertEqual(reason { try verifier.verify(receipt: signer.receipt(fields: fields), at: now) }, expected, name)
        }
    }

    func testPayloadReaderRefusesNonDER() {
        let good = TestReceiptSigner.payload([(2, [0x41])])
        XCTAssertEqual(try ReceiptPayload.attributes(good), [ReceiptAttribute(type: 2, version: 1, value: [0x41])])
        let bad: [(String, [UInt8])] = [
            ("empty", []),
            ("indefinite length", [0x31, 0x80, 0x00, 0x00]),
            ("long form below 128", [0x31, 0x81, 0x0a] + Array(good.dropFirst(2))),
            ("trailing byte", good + [0]),
            ("negative type", [0x31, 0x0a, 0x30, 0x08, 0x02, 0x01, 0xff, 0x02, 0x01, 0x01, 0x04, 0x00]),
            ("non-minimal integer", [0x31, 0x0b, 0x30, 0x09, 0x02, 0x02, 0x00, 0x02, 0x02, 0x01, 0x01, 0x04, 0x00]),
            ("four elements", [0x31, 0x0c, 0x30, 0x0a, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01, 0x04, 0x00, 0x05, 0x00]),
            ("length past the end", [0x31, 0x05, 0x30]),
        ]
        for (name, bytes) in bad {
            XCTAssertThrowsError(try ReceiptPayload.attributes(bytes), name) { error in
                XCTAssertEqual((error as? AppAttestError)?.reason, "receipt_fields_malformed", name)
            }
        }
    }

    private func reason(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return (error as? AppAttestError)?.reason ?? "\(error)"
        }
    }
}
