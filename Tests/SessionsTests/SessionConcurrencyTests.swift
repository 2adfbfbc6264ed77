import Dispatch
import Foundation
import KeywardCrypto
import Sessions
import XCTest

final class SessionConcurrencyTests: XCTestCase {
    func testConcurrentVerificationsThroughTheCacheAgree() throws {
        let now: Int64 = 1_800_000_000
        let keys = try SessionKeySet(active: (kid: "k1", key: try ECPrivateKey.generate(.p256)))
        let issuer = try SessionIssuer(keys: keys, issuer: "iss", ttlSeconds: 600)
        let verifier = SessionVerifier(keys: keys, issuer: "iss", maxTTLSeconds: 600, cacheCapacity: 8)
        let tokens = try (0..<16).map { try issuer.issue(deviceID: "d\($0)", platform: .android, now: now).token }
        let lock = NSLock()
        nonisolated(unsafe) var mismatches: [Int] = []
        DispatchQueue.concurrentPerform(iterations: 256) { index in
            let subject = try? verifier.verify(tokens[index % 16], now: now + 1).sub
            if subject != "d\(index % 16)" { lock.withLock { mismatches.append(index) } }
        }
        XCTAssertEqual(mismatches, [])
        XCTAssertLessThanOrEqual(verifier.cachedTokenCount, 8)
    }
}
