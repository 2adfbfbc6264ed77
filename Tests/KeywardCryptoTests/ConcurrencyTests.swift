import Dispatch
import KeywardCrypto
import XCTest

/// Keys, certificates and the chain verifier are shared between request threads: results must
/// not depend on interleaving (OpenSSL objects are only read; the memo is behind a lock).
final class ConcurrencyTests: XCTestCase {
    func testConcurrentChainVerificationsGiveTheSameVerdicts() throws {
        let chain = try TestChain()
        let forged = try TestChain.leaf(key: try ECPrivateKey.generate(.p256), validity: TestChain.start...(TestChain.start + 30 * TestChain.day),
                                        issuer: chain.intermediate, issuerKey: try ECPrivateKey.generate(.p384))
        let verifier = X509ChainVerifier(trustedRoot: chain.root)
        let now = TestChain.start + TestChain.day
        let outcomes = Outcomes(count: 64)
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let leaf = index % 2 == 0 ? chain.leaf : forged
            do throws(X509Error) {
                try verifier.verify(leaf: leaf, intermediates: [chain.intermediate], at: now)
                outcomes.set(index, "ok")
            } catch {
                outcomes.set(index, error.reason)
            }
        }
        for index in 0..<64 {
            XCTAssertEqual(outcomes.get(index), index % 2 == 0 ? "ok" : "chain_untrusted")
        }
        XCTAssertEqual(verifier.memoizedChainCount, 1)
    }

    func testConcurrentSigningAndVerificationWithOneKey() throws {
        let key = try ECPrivateKey.generate(.p256)
        let failures = Outcomes(count: 64)
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let message = Array("message \(index)".utf8)
            guard let signature = try? key.signatureRaw(message: message),
                  key.publicKey.isValidSignature(raw: signature, message: message),
                  !key.publicKey.isValidSignature(raw: signature, message: message + [0])
            else { return failures.set(index, "failed") }
        }
        XCTAssertEqual((0..<64).compactMap { failures.get($0) }, [])
    }
}

/// A lock-protected result table for concurrentPerform.
final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String?]

    init(count: Int) { values = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ value: String) { lock.withLock { values[index] = value } }
    func get(_ index: Int) -> String? { lock.withLock { values[index] } }
}
