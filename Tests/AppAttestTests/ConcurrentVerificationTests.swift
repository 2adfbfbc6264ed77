import AppAttest
import Dispatch
import Foundation
import XCTest

/// One verifier shared by many threads (as the server shares it) gives the same answers as one thread.
final class ConcurrentVerificationTests: XCTestCase {
    func testOneVerifierSharedByEightThreadsAcceptsRealVectorsAndRefusesTheirNegatives() throws {
        let all = try AppAttestVectors.all()
        let attestation = try XCTUnwrap(all.first { $0.name == "node-app-attest/params.json#1" })  // production, valid
        let wrongNonce = try XCTUnwrap(all.first { $0.name == "node-app-attest/params.json#4" })  // same bytes, other challenge
        let verifier = AttestationVerifier(teamID: "V8H6LQ9448", bundleIDs: ["io.uebelacker.AppAttestExample"], environment: .production)
        let bytes = try attestation.data()
        let keyID = try XCTUnwrap(TestBase64.decode(try XCTUnwrap(attestation.key_id_b64)))
        let goodHash = try attestation.clientDataHash(), badHash = try wrongNonce.clientDataHash()
        let at = try XCTUnwrap(attestation.verify_at_unix)

        let assertionVector = try XCTUnwrap(all.first { $0.name == "node-app-attest/params.json#2" })
        let assertionVerifier = AssertionVerifier(teamID: "V8H6LQ9448", bundleIDs: ["io.uebelacker.AppAttestExample"])
        let assertion = try assertionVector.data(), publicKey = try assertionVector.publicKeyX962()
        let assertionHash = try assertionVector.clientDataHash()

        let results = ResultsBox()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<20 {
                let good = (try? verifier.verify(attestation: bytes, keyID: keyID, clientDataHash: goodHash, at: at)) != nil
                let bad = reason { try verifier.verify(attestation: bytes, keyID: keyID, clientDataHash: badHash, at: at) }
                let counter = try? assertionVerifier.verify(assertion: assertion, publicKey: publicKey, clientDataHash: assertionHash,
                                                            storedCounter: 0, appID: "V8H6LQ9448.io.uebelacker.AppAttestExample")
                let replay = reason {
                    try assertionVerifier.verify(assertion: assertion, publicKey: publicKey, clientDataHash: assertionHash,
                                                 storedCounter: 1, appID: "V8H6LQ9448.io.uebelacker.AppAttestExample")
                }
                results.record(good && bad == "nonce_mismatch" && counter == 1 && replay == "counter_replay", "\(thread)/\(round)")
            }
        }
        XCTAssertEqual(results.failures, [])
        XCTAssertEqual(results.successes, 160)
    }
}

/// Collects outcomes from many threads.
private final class ResultsBox: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var successes = 0
    private(set) var failures: [String] = []

    func record(_ ok: Bool, _ label: String) {
        lock.withLock {
            if ok { successes += 1 } else { failures.append(label) }
        }
    }
}
