import DeviceSimulator
import KeywardCrypto
import PlayIntegrity
import XCTest

/// Arbitrary damage to a valid classic token is refused with a slug, never accepted and never a trap.
final class ClassicTokenMutationTests: XCTestCase {
    typealias F = VerdictFixture

    /// A fixed-seed generator so a failure replays (SplitMix64).
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    func testMutatedTokensAreAllRefused() throws {
        let keys = try IntegrityTestKeys.generate()
        let decoder = ClassicTokenDecoder(keys: try ClassicIntegrityKeys(decryptionKey: keys.decryptionKey, verificationKey: keys.signingKey.publicKey))
        let verdict = AndroidIntegrityVerdict(request: .classic, packageName: F.packageName, challenge: F.challenge, installID: F.installID,
                                              timestampMillis: F.nowMillis, certificateDigest: F.certificateDigest)
        let token = Array(try keys.classicToken(verdict).utf8)
        XCTAssertNoThrow(try decoder.decode(String(decoding: token, as: UTF8.self)))
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ \u{0}".utf8)
        var random = SeededGenerator(state: 0x4B45_5957_4152_4421)
        var reasons: [String: Int] = [:]
        for round in 0..<400 {
            var mutated = token
            switch round % 4 {
            case 0: // replace one character
                let index = Int.random(in: 0..<mutated.count, using: &random)
                let replacement = alphabet.randomElement(using: &random) ?? 0
                guard mutated[index] != replacement else { continue }
                mutated[index] = replacement
            case 1: // truncate
                mutated.removeLast(Int.random(in: 1..<mutated.count, using: &random))
            case 2: // delete one character
                mutated.remove(at: Int.random(in: 0..<mutated.count, using: &random))
            default: // insert one character
                mutated.insert(alphabet.randomElement(using: &random) ?? 0, at: Int.random(in: 0...mutated.count, using: &random))
            }
            do {
                _ = try decoder.decode(String(decoding: mutated, as: UTF8.self))
                // Base64url's last character may carry unused bits: a change there can leave the bytes intact.
                XCTAssertEqual(try XCTUnwrap(String(decoding: mutated, as: UTF8.self).split(separator: ".").map { Base64.decode(String($0)) }),
                               String(decoding: token, as: UTF8.self).split(separator: ".").map { Base64.decode(String($0)) },
                               "round \(round): a token with different bytes was accepted")
            } catch {
                reasons[error.reason, default: 0] += 1
                if case .rejected = error {} else { XCTFail("round \(round): \(error) is not a rejection") }
            }
        }
        // Damage anywhere is caught before the signature: by the framing, the key unwrap or the GCM tag.
        XCTAssertTrue(reasons.keys.allSatisfy { $0 == "token_malformed" || $0.hasPrefix("jwe_") }, "\(reasons)")
        XCTAssertGreaterThan(reasons["jwe_decryption_failed", default: 0], 100, "\(reasons)")
    }
}
