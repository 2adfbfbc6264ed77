import KeywardCrypto
import XCTest

final class X509ChainVerifierTests: XCTestCase {
    private let now = TestChain.start + 10 * TestChain.day

    private func assertRefused(_ chain: TestChain, verifier: X509ChainVerifier? = nil, intermediates: [X509Certificate]? = nil,
                               leaf: X509Certificate? = nil, at: Int64, reason: String, file: StaticString = #filePath, line: UInt = #line) {
        let verifier = verifier ?? X509ChainVerifier(trustedRoot: chain.root)
        XCTAssertThrowsError(try verifier.verify(leaf: leaf ?? chain.leaf, intermediates: intermediates ?? [chain.intermediate], at: at),
                             file: file, line: line) { error in
            XCTAssertEqual((error as? X509Error)?.reason, reason, "\(error)", file: file, line: line)
        }
    }

    func testGoodChainVerifies() throws {
        let chain = try TestChain()
        let verifier = X509ChainVerifier(trustedRoot: chain.root)
        XCTAssertNoThrow(try verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: now))
        XCTAssertEqual(verifier.memoizedChainCount, 1)
    }

    func testExpiredLeafIntermediateOrRootIsRefused() throws {
        let s = TestChain.start, d = TestChain.day
        assertRefused(try TestChain(leaf: s...(s + 5 * d)), at: now, reason: "certificate_expired")
        assertRefused(try TestChain(intermediate: s...(s + 5 * d)), at: now, reason: "certificate_expired")
        assertRefused(try TestChain(root: s...(s + 5 * d)), at: now, reason: "certificate_expired")
    }

    func testNotYetValidLeafIntermediateOrRootIsRefused() throws {
        let s = TestChain.start, d = TestChain.day
        assertRefused(try TestChain(leaf: (s + 20 * d)...(s + 30 * d)), at: now, reason: "certificate_not_yet_valid")
        assertRefused(try TestChain(intermediate: (s + 20 * d)...(s + 300 * d)), at: now, reason: "certificate_not_yet_valid")
        assertRefused(try TestChain(root: (s + 20 * d)...(s + 300 * d)), at: now, reason: "certificate_not_yet_valid")
    }

    func testValidityBoundsAreInclusive() throws {
        let chain = try TestChain()
        let verifier = X509ChainVerifier(trustedRoot: chain.root)
        XCTAssertNoThrow(try verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: chain.leaf.notBefore))
        XCTAssertNoThrow(try verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: chain.leaf.notAfter))
        assertRefused(chain, verifier: verifier, at: chain.leaf.notAfter + 1, reason: "certificate_expired")
        assertRefused(chain, verifier: verifier, at: chain.leaf.notBefore - 1, reason: "certificate_not_yet_valid")
    }

    func testChainToAnotherRootWithTheSameNameIsUntrusted() throws {
        let chain = try TestChain(), impostor = try TestChain()
        assertRefused(chain, verifier: X509ChainVerifier(trustedRoot: impostor.root), at: now, reason: "chain_untrusted")
    }

    func testRootCarriedAmongIntermediatesIsRefused() throws {
        let chain = try TestChain()
        assertRefused(chain, intermediates: [chain.intermediate, chain.root], at: now, reason: "chain_untrusted")
        // Even a different self-signed certificate: the client may not bring an anchor at all.
        let other = try TestChain(rootName: "Some Other Root")
        assertRefused(chain, intermediates: [chain.intermediate, other.root], at: now, reason: "chain_untrusted")
    }

    func testSelfSignedLeafOrTheRootAsLeafIsRefused() throws {
        let chain = try TestChain()
        assertRefused(chain, intermediates: [], leaf: chain.root, at: now, reason: "chain_untrusted")
    }

    func testMissingIntermediateIsUntrusted() throws {
        let chain = try TestChain()
        assertRefused(chain, intermediates: [], at: now, reason: "chain_untrusted")
    }

    func testIntermediateThatIsNotACAIsUntrusted() throws {
        let chain = try TestChain()
        let key = try ECPrivateKey.generate(.p384)
        let notCA = try X509CertificateBuilder(commonName: "Not a CA", publicKey: key.publicKey,
                                               notBefore: TestChain.start, notAfter: TestChain.start + 100 * TestChain.day)
            .signed(by: chain.root, issuerKey: chain.rootKey, digest: .sha384)
        let leaf = try TestChain.leaf(key: chain.leafKey, validity: TestChain.start...(TestChain.start + 30 * TestChain.day),
                                      issuer: notCA, issuerKey: key)
        assertRefused(chain, intermediates: [notCA], leaf: leaf, at: now, reason: "chain_untrusted")
    }

    func testUnusedExtraIntermediateIsRefused() throws {
        let chain = try TestChain(), stranger = try TestChain()
        assertRefused(chain, intermediates: [chain.intermediate, stranger.intermediate], at: now, reason: "chain_untrusted")
        assertRefused(chain, intermediates: [stranger.intermediate, chain.intermediate], at: now, reason: "chain_untrusted")
    }

    func testMemoizedIntermediateStillChecksValidityAtEachTime() throws {
        let s = TestChain.start, d = TestChain.day
        let chain = try TestChain(intermediate: s...(s + 20 * d))
        let verifier = X509ChainVerifier(trustedRoot: chain.root)
        XCTAssertNoThrow(try verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: now))
        XCTAssertEqual(verifier.memoizedChainCount, 1)
        // Same intermediate, later time: the memo must not skip its expiry.
        assertRefused(chain, verifier: verifier, at: s + 25 * d, reason: "certificate_expired")
        assertRefused(chain, verifier: verifier, at: s - 1, reason: "certificate_not_yet_valid")
    }

    func testMemoizedIntermediateStillChecksTheLeafSignature() throws {
        let chain = try TestChain()
        let verifier = X509ChainVerifier(trustedRoot: chain.root)
        XCTAssertNoThrow(try verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: now))
        // A second leaf under the memoized intermediate verifies on the short path…
        let second = try TestChain.leaf(key: try ECPrivateKey.generate(.p256), validity: TestChain.start...(TestChain.start + 30 * TestChain.day),
                                        issuer: chain.intermediate, issuerKey: chain.intermediateKey)
        XCTAssertNoThrow(try verifier.verify(leaf: second, intermediates: [chain.intermediate], at: now))
        // …but a leaf with the intermediate's name signed by another key does not.
        let forged = try TestChain.leaf(key: try ECPrivateKey.generate(.p256), validity: TestChain.start...(TestChain.start + 30 * TestChain.day),
                                        issuer: chain.intermediate, issuerKey: try ECPrivateKey.generate(.p384))
        assertRefused(chain, verifier: verifier, leaf: forged, at: now, reason: "chain_untrusted")
        // And the memo does not let a once-seen intermediate vouch after it expires.
        assertRefused(chain, verifier: verifier, leaf: second, at: chain.intermediate.notAfter + 1, reason: "certificate_expired")
    }

    func testMemoIsBounded() throws {
        let chain = try TestChain()
        let verifier = X509ChainVerifier(trustedRoot: chain.root, memoCapacity: 2)
        for _ in 0..<4 {
            let key = try ECPrivateKey.generate(.p384)
            let intermediate = try X509CertificateBuilder(commonName: "Keyward Test Intermediate", publicKey: key.publicKey,
                                                          notBefore: TestChain.start, notAfter: TestChain.start + 100 * TestChain.day, isCA: true)
                .signed(by: chain.root, issuerKey: chain.rootKey, digest: .sha384)
            let leaf = try TestChain.leaf(key: chain.leafKey, validity: TestChain.start...(TestChain.start + 30 * TestChain.day),
                                          issuer: intermediate, issuerKey: key)
            XCTAssertNoThrow(try verifier.verify(leaf: leaf, intermediates: [intermediate], at: now))
        }
        XCTAssertEqual(verifier.memoizedChainCount, 2)
    }

    func testLeafWithUnknownCriticalExtensionIsRefusedOnBothPaths() throws {
        let chain = try TestChain()
        let key = try ECPrivateKey.generate(.p256)
        let critical = try X509CertificateBuilder(commonName: "critical", publicKey: key.publicKey,
                                                  notBefore: TestChain.start, notAfter: TestChain.start + 30 * TestChain.day,
                                                  extensions: [X509Extension(oid: "1.3.6.1.4.1.55555.1", critical: true, value: [0x05, 0x00])])
            .signed(by: chain.intermediate, issuerKey: chain.intermediateKey)
        let verifier = X509ChainVerifier(trustedRoot: chain.root)
        assertRefused(chain, verifier: verifier, leaf: critical, at: now, reason: "chain_untrusted")
        XCTAssertNoThrow(try verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: now))
        XCTAssertEqual(verifier.memoizedChainCount, 1)
        // The memo's short path must not accept what the full path refuses.
        assertRefused(chain, verifier: verifier, leaf: critical, at: now, reason: "chain_untrusted")
    }

    func testIntermediateWithPathLengthZeroCannotIssueAnotherCA() throws {
        let chain = try TestChain()
        let subKey = try ECPrivateKey.generate(.p384)
        // basicConstraints SEQUENCE { cA TRUE, pathLenConstraint 0 }
        let pathLenZero = X509Extension(oid: "2.5.29.19", critical: true, value: [0x30, 0x06, 0x01, 0x01, 0xFF, 0x02, 0x01, 0x00])
        let constrained = try X509CertificateBuilder(commonName: "Constrained CA", publicKey: chain.intermediateKey.publicKey,
                                                     notBefore: TestChain.start, notAfter: TestChain.start + 100 * TestChain.day,
                                                     isCA: true, extensions: [pathLenZero])
            .signed(by: chain.root, issuerKey: chain.rootKey, digest: .sha384)
        let sub = try X509CertificateBuilder(commonName: "Sub CA", publicKey: subKey.publicKey,
                                             notBefore: TestChain.start, notAfter: TestChain.start + 100 * TestChain.day, isCA: true)
            .signed(by: constrained, issuerKey: chain.intermediateKey, digest: .sha384)
        let leaf = try TestChain.leaf(key: chain.leafKey, validity: TestChain.start...(TestChain.start + 30 * TestChain.day),
                                      issuer: sub, issuerKey: subKey)
        assertRefused(chain, intermediates: [sub, constrained], leaf: leaf, at: now, reason: "chain_untrusted")
        // The same leaf shape directly under the constrained CA is fine.
        let direct = try TestChain.leaf(key: chain.leafKey, validity: TestChain.start...(TestChain.start + 30 * TestChain.day),
                                        issuer: constrained, issuerKey: chain.intermediateKey)
        XCTAssertNoThrow(try X509ChainVerifier(trustedRoot: chain.root).verify(leaf: direct, intermediates: [constrained], at: now))
    }

    func testIntermediatePresentedAsTheLeafIsRefused() throws {
        let chain = try TestChain()
        let verifier = X509ChainVerifier(trustedRoot: chain.root)
        assertRefused(chain, verifier: verifier, intermediates: [], leaf: chain.intermediate, at: now, reason: "chain_untrusted")
    }

    func testMoreThanEightIntermediatesAreRefusedBeforeAnyWork() throws {
        let chain = try TestChain()
        assertRefused(chain, intermediates: Array(repeating: chain.intermediate, count: 9), at: now, reason: "chain_untrusted")
    }
}
