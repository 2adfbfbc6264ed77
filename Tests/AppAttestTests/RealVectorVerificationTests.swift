import AppAttest
import KeywardCrypto
import XCTest

/// Every real-device vector gives its expected result through the library, clock pinned to verify_at_unix.
final class RealVectorVerificationTests: XCTestCase {
    func testEveryAttestationVectorGivesItsExpectedResult() throws {
        let vectors = try AppAttestVectors.all().filter { $0.kind == "attestation" }
        XCTAssertEqual(vectors.count, 18)
        var valid = 0
        for vector in vectors {
            let environment = try XCTUnwrap(AppAttestEnvironment(rawValue: vector.environment ?? ""), vector.name)
            let verifier = AttestationVerifier(teamID: try XCTUnwrap(vector.team_id), bundleIDs: [try XCTUnwrap(vector.bundle_id)],
                                               environment: environment)
            let keyID = try XCTUnwrap(TestBase64.decode(try XCTUnwrap(vector.key_id_b64)))
            let at = try XCTUnwrap(vector.verify_at_unix, vector.name)
            let expected = try vector.expectedReason()
            do {
                let key = try verifier.verify(attestation: vector.data(), keyID: keyID, clientDataHash: vector.clientDataHash(), at: at)
                XCTAssertNil(expected, "\(vector.name) accepted, expected \(expected ?? "")")
                XCTAssertEqual(key.keyID, keyID, vector.name)
                XCTAssertEqual(SHA256.hash(key.publicKey), keyID, vector.name)
                XCTAssertEqual(key.publicKey, try vector.publicKeyX962(), vector.name)
                XCTAssertEqual(key.counter, 0, vector.name)
                XCTAssertEqual(key.environment, environment, vector.name)
                XCTAssertEqual(key.appID, vector.receipt_app_id, vector.name)
                XCTAssertFalse(key.receipt.isEmpty, vector.name)
                valid += 1
            } catch {
                XCTAssertEqual((error as? AppAttestError)?.reason, expected, "\(vector.name): \(error)")
            }
            // inspect agrees with verify.
            let report = verifier.inspect(attestation: try vector.data(), keyID: keyID, clientDataHash: try vector.clientDataHash(), at: at)
            XCTAssertEqual(report.firstFailure?.reason, expected, vector.name)
        }
        XCTAssertEqual(valid, 14)
    }

    func testEveryAssertionVectorGivesItsExpectedResultAndTheUnverifiedOneIsRejected() throws {
        let all = try AppAttestVectors.all()
        let vectors = all.filter { $0.kind == "assertion" }
        XCTAssertEqual(vectors.count, 13)
        var valid = 0
        var unverifiedSeen = false
        for vector in vectors {
            let (team, bundle) = try vector.teamAndBundle(in: all)
            let verifier = AssertionVerifier(teamID: team, bundleIDs: [bundle])
            let expected = try vector.expectedReason()
            unverifiedSeen = unverifiedSeen || vector.expect.hasPrefix("unverified")
            do {
                let counter = try verifier.verify(assertion: vector.data(), publicKey: vector.publicKeyX962(),
                                                  clientDataHash: vector.clientDataHash(),
                                                  storedCounter: vector.previous_counter ?? 0, appID: "\(team).\(bundle)")
                XCTAssertNil(expected, "\(vector.name) accepted, expected \(expected ?? "")")
                XCTAssertEqual(counter, vector.counter, vector.name)
                valid += 1
            } catch {
                XCTAssertEqual((error as? AppAttestError)?.reason, expected, "\(vector.name): \(error)")
            }
        }
        XCTAssertEqual(valid, 10)
        XCTAssertTrue(unverifiedSeen)
    }

    func testARealAssertionVerifiesAgainstTheKeyItsRealAttestationEstablished() throws {
        let all = try AppAttestVectors.all()
        let attestationVector = try XCTUnwrap(all.first { $0.name == "devicecheck-appattest/params.json#0" })
        let assertionVector = try XCTUnwrap(all.first { $0.name == "devicecheck-appattest/params.json#1" })
        let team = "6MURL8TA57", bundle = "de.vincent-haupert.apple-appattest-poc"
        let key = try AttestationVerifier(teamID: team, bundleIDs: ["other.app", bundle], environment: .development).verify(
            attestation: attestationVector.data(), keyID: XCTUnwrap(TestBase64.decode(XCTUnwrap(attestationVector.key_id_b64))),
            clientDataHash: attestationVector.clientDataHash(), at: XCTUnwrap(attestationVector.verify_at_unix))
        let verifier = AssertionVerifier(teamID: team, bundleIDs: [bundle])
        let counter = try verifier.verify(assertion: assertionVector.data(), publicKey: key.publicKey,
                                          clientDataHash: assertionVector.clientDataHash(), storedCounter: key.counter, appID: key.appID)
        XCTAssertEqual(counter, 1)
        // The same assertion again, with the counter stored: a replay.
        XCTAssertEqual(reason {
            try verifier.verify(assertion: assertionVector.data(), publicKey: key.publicKey,
                                clientDataHash: assertionVector.clientDataHash(), storedCounter: counter, appID: key.appID)
        }, "counter_replay")
    }

    func testAProductionVerifierRefusesEveryRealDevelopmentAttestationAtTheAAGUIDStep() throws {
        for vector in try AppAttestVectors.all() where vector.kind == "attestation" && vector.environment == "development" && vector.isValid {
            let verifier = AttestationVerifier(teamID: try XCTUnwrap(vector.team_id), bundleIDs: [try XCTUnwrap(vector.bundle_id)],
                                               environment: .production)
            XCTAssertEqual(reason {
                try verifier.verify(attestation: vector.data(), keyID: XCTUnwrap(TestBase64.decode(XCTUnwrap(vector.key_id_b64))),
                                    clientDataHash: vector.clientDataHash(), at: XCTUnwrap(vector.verify_at_unix))
            }, "aaguid_mismatch", vector.name)
        }
    }
}
