import KeywardCrypto
import Sessions
import XCTest

/// Session negatives: each forged or out-of-policy token is refused for its reason, never accepted
/// on a weaker reading.
final class SessionNegativeTests: XCTestCase {
    private let now: Int64 = 1_800_000_000
    private let issuerName = "https://keyward.test"
    private var key: ECPrivateKey!
    private var keys: SessionKeySet!
    private var verifier: SessionVerifier!

    override func setUpWithError() throws {
        key = try ECPrivateKey.generate(.p256)
        keys = try SessionKeySet(active: (kid: "k1", key: key))
        verifier = SessionVerifier(keys: keys, issuer: issuerName, maxTTLSeconds: 3600, leewaySeconds: 60)
    }

    private var validClaims: String { TokenForge.claims(iat: now, exp: now + 3600) }

    private func assertRefused(_ token: String, at time: Int64? = nil, _ reason: String, verifier: SessionVerifier? = nil,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try (verifier ?? self.verifier).verify(token, now: time ?? now), file: file, line: line) { error in
            XCTAssertEqual((error as? SessionError)?.reason, reason, file: file, line: line)
        }
    }

    private func es256(_ header: String, _ claims: String, with signer: ECPrivateKey? = nil) throws -> String {
        try TokenForge.token(header: header, claims: claims) { try (signer ?? key).signatureRaw(message: $0) }
    }

    func testWellFormedForgeryIsAcceptedSoTheNegativesAreMeaningful() throws {
        XCTAssertEqual(try verifier.verify(try es256(TokenForge.header(), validClaims), now: now).sub, "device-1")
    }

    func testAlgNoneWithEmptySignatureIsRefused() {
        assertRefused(TokenForge.token(header: TokenForge.header(alg: "none"), claims: validClaims) { _ in [] }, "alg_not_allowed")
    }

    func testHS256KeyedWithOurPublicKeyIsRefused() throws {
        for secret in [Array(key.publicKey.pem.utf8), key.publicKey.spkiDER, key.publicKey.x962] {
            let token = TokenForge.token(header: TokenForge.header(alg: "HS256"), claims: validClaims) {
                TokenForge.hmacSHA256(key: secret, message: $0)
            }
            assertRefused(token, "alg_not_allowed")
        }
    }

    func testES384IsRefused() throws {
        let p384 = try ECPrivateKey.generate(.p384)
        assertRefused(try es256(TokenForge.header(alg: "ES384"), validClaims, with: p384), "alg_not_allowed")
        // Even with a perfectly good ES256 signature under the header's kid.
        assertRefused(try es256(TokenForge.header(alg: "ES384"), validClaims), "alg_not_allowed")
    }

    func testDERSignatureIsRefused() throws {
        let token = try TokenForge.token(header: TokenForge.header(), claims: validClaims) { try key.signatureDER(message: $0) }
        assertRefused(token, "signature_malformed")
    }

    func testZeroSignatureIsRefused() {
        let token = TokenForge.token(header: TokenForge.header(), claims: validClaims) { _ in [UInt8](repeating: 0, count: 64) }
        assertRefused(token, "signature_invalid")
    }

    func testUnknownKidIsRefused() throws {
        assertRefused(try es256(TokenForge.header(kid: "k2"), validClaims), "kid_unknown")
        assertRefused(try es256(TokenForge.header(kid: "K1"), validClaims), "kid_unknown")
    }

    func testMissingKidIsRefused() throws {
        assertRefused(try es256(TokenForge.header(kid: nil), validClaims), "kid_missing")
    }

    func testPathLikeKidIsRefused() throws {
        for kid in ["../k1", "keys/k1", "k1.pem", "/etc/passwd", "k1\\\\x", ""] {
            assertRefused(try es256(TokenForge.header(kid: kid), validClaims), "kid_invalid")
        }
    }

    func testTokenSignedByRetiredKeyUnderAnotherKidIsRefused() throws {
        let retired = try ECPrivateKey.generate(.p256)
        let rotated = try SessionKeySet(active: (kid: "k2", key: try ECPrivateKey.generate(.p256)),
                                        verifyOnly: [(kid: "k1", key: retired.publicKey)])
        let verifier = SessionVerifier(keys: rotated, issuer: issuerName, maxTTLSeconds: 3600)
        assertRefused(try es256(TokenForge.header(kid: "k2"), validClaims, with: retired), "signature_invalid", verifier: verifier)
    }

    func testTokenSignedByRetiredButListedKeyUnderItsOwnKidIsAcceptedUntilItExpires() throws {
        let old = try ECPrivateKey.generate(.p256)
        let before = try SessionKeySet(active: (kid: "old", key: old))
        let session = try SessionIssuer(keys: before, issuer: issuerName, ttlSeconds: 3600).issue(deviceID: "d", platform: .ios, now: now)
        let after = try SessionKeySet(active: (kid: "new", key: try ECPrivateKey.generate(.p256)),
                                      verifyOnly: [(kid: "old", key: old.publicKey)])
        let verifier = SessionVerifier(keys: after, issuer: issuerName, maxTTLSeconds: 3600, leewaySeconds: 60)
        XCTAssertEqual(try verifier.verify(session.token, now: now + 3000).sub, "d")
        XCTAssertEqual(try verifier.verify(session.token, now: session.expiresAt + 59).sub, "d")
        assertRefused(session.token, at: session.expiresAt + 60, "token_expired", verifier: verifier)
    }

    func testExpiryPastTheLeewayIsRefused() throws {
        let token = try es256(TokenForge.header(), TokenForge.claims(iat: now - 3600, exp: now - 60))
        assertRefused(token, "token_expired")
        let withinLeeway = try es256(TokenForge.header(), TokenForge.claims(iat: now - 3600, exp: now - 59))
        XCTAssertNoThrow(try verifier.verify(withinLeeway, now: now))
    }

    func testLeewayIsCappedAtSixtySeconds() throws {
        let generous = SessionVerifier(keys: keys, issuer: issuerName, maxTTLSeconds: 3600, leewaySeconds: 3600)
        assertRefused(try es256(TokenForge.header(), TokenForge.claims(iat: now - 3600, exp: now - 60)), "token_expired", verifier: generous)
    }

    func testNotBeforeInTheFutureIsRefused() throws {
        assertRefused(try es256(TokenForge.header(), TokenForge.claims(iat: now, exp: now + 600, nbf: now + 61)), "token_not_yet_valid")
        XCTAssertNoThrow(try verifier.verify(try es256(TokenForge.header(), TokenForge.claims(iat: now, exp: now + 600, nbf: now + 60)), now: now))
    }

    func testIssuedInTheFutureIsRefused() throws {
        assertRefused(try es256(TokenForge.header(), TokenForge.claims(iat: now + 61, exp: now + 600)), "token_issued_in_future")
    }

    func testLifetimeLongerThanConfiguredIsRefused() throws {
        assertRefused(try es256(TokenForge.header(), TokenForge.claims(iat: now, exp: now + 3601)), "ttl_too_long")
    }

    func testAnotherIssuerIsRefused() throws {
        assertRefused(try es256(TokenForge.header(), TokenForge.claims(iss: "https://evil.test", iat: now, exp: now + 60)), "issuer_mismatch")
    }

    func testTamperedClaimsAreRefused() throws {
        let token = try es256(TokenForge.header(), validClaims)
        let parts = token.split(separator: ".").map(String.init)
        let forgedClaims = Base64.encodeURL(Array(TokenForge.claims(sub: "someone-else", iat: now, exp: now + 3600).utf8))
        assertRefused([parts[0], forgedClaims, parts[2]].joined(separator: "."), "signature_invalid")
    }

    func testOtherSpellingsAndShapesAreMalformed() throws {
        let token = try es256(TokenForge.header(), validClaims)
        let parts = token.split(separator: ".").map(String.init)
        let signature = Base64.decode(parts[2]) ?? []
        assertRefused([parts[0], parts[1], Base64.encode(signature)].joined(separator: "."), "token_malformed")   // padded / standard alphabet
        assertRefused(token + ".x.y", "token_malformed")
        assertRefused(parts[0] + "." + parts[1], "token_malformed")
        assertRefused("", "token_malformed")
        assertRefused("..", "token_malformed")
        assertRefused(String(repeating: "a", count: 5000), "token_malformed")
        assertRefused(try es256(TokenForge.header(extra: ",\"crit\":[\"exp\"]"), validClaims), "token_malformed")
        assertRefused(try es256("{\"alg\":\"ES256\",\"typ\":\"JOSE+JSON\",\"kid\":\"k1\"}", validClaims), "token_malformed")
        assertRefused(try es256("not json", validClaims), "token_malformed")
    }

    func testExtremeTimeClaimsAreRefusedWithoutOverflow() throws {
        assertRefused(try es256(TokenForge.header(), TokenForge.claims(iat: -1, exp: .max)), "ttl_too_long")
        assertRefused(try es256(TokenForge.header(), TokenForge.claims(iat: .min, exp: 0)), "ttl_too_long")
        let huge = SessionVerifier(keys: keys, issuer: issuerName, maxTTLSeconds: .max)
        assertRefused(try es256(TokenForge.header(), TokenForge.claims(iat: .max - 10, exp: .max)), "token_issued_in_future", verifier: huge)
        assertRefused(try es256(TokenForge.header(), TokenForge.claims(iat: now, exp: .max, nbf: .max)), at: .max, "token_expired", verifier: huge)
    }

    func testClaimsOfTheWrongShapeAreRefused() throws {
        for claims in [
            "{\"iss\":\"\(issuerName)\",\"sub\":\"d\",\"plat\":\"ios\",\"iat\":\(now)}",                       // no exp
            "{\"iss\":\"\(issuerName)\",\"sub\":\"d\",\"plat\":\"ios\",\"iat\":\(now),\"exp\":\"\(now + 60)\"}", // exp a string
            "{\"iss\":\"\(issuerName)\",\"sub\":\"d\",\"plat\":\"ios\",\"iat\":\(now),\"exp\":\(now).5}",        // exp not an integer
            TokenForge.claims(plat: "windows", iat: now, exp: now + 60),
            TokenForge.claims(sub: "", iat: now, exp: now + 60),
            TokenForge.claims(iat: now, exp: now),
        ] {
            assertRefused(try es256(TokenForge.header(), claims), "claims_invalid")
        }
    }

    func testDuplicateMemberNamesAreRefused() throws {
        // RFC 7515 §4 and RFC 7519 §4: a JOSE header or claims set with duplicate names is refused;
        // a parser that keeps the first value would honour an expiry another reads as long past.
        let claims = "{\"iss\":\"\(issuerName)\",\"sub\":\"device-1\",\"plat\":\"ios\",\"iat\":\(now),\"exp\":\(now + 300),\"exp\":\(now - 1000)}"
        assertRefused(try es256(TokenForge.header(), claims), "claims_invalid")
        // The same name spelled with an escape is the same member.
        let escaped = "{\"iss\":\"\(issuerName)\",\"sub\":\"device-1\",\"plat\":\"ios\",\"iat\":\(now),\"exp\":\(now + 300),\"\\u0065xp\":\(now - 1000)}"
        assertRefused(try es256(TokenForge.header(), escaped), "claims_invalid")
        assertRefused(try es256(TokenForge.header(extra: ",\"kid\":\"k2\""), validClaims), "token_malformed")
        assertRefused(try es256(TokenForge.header(extra: ",\"alg\":\"none\""), validClaims), "token_malformed")
    }

    func testAnAudienceClaimIsRefused() throws {
        // Keyward never issues `aud`; a verifier elsewhere would honour one (RFC 7519 §4.1.3).
        let claims = String(validClaims.dropLast()) + ",\"aud\":\"https://other.example\"}"
        assertRefused(try es256(TokenForge.header(), claims), "claims_invalid")
    }

    func testNumbersThatAreNotPlainIntegersAreRefused() throws {
        for exp in ["\(now + 300).0", "1.8e9", "18E8", "\(now + 300)e0", "-0.5"] {
            let claims = "{\"iss\":\"\(issuerName)\",\"sub\":\"device-1\",\"plat\":\"ios\",\"iat\":\(now),\"exp\":\(exp)}"
            assertRefused(try es256(TokenForge.header(), claims), "claims_invalid")
        }
        let iat = "{\"iss\":\"\(issuerName)\",\"sub\":\"device-1\",\"plat\":\"ios\",\"iat\":\(now).0,\"exp\":\(now + 300)}"
        assertRefused(try es256(TokenForge.header(), iat), "claims_invalid")
    }

    func testALeadingByteOrderMarkIsRefused() throws {
        assertRefused(try es256("\u{FEFF}" + TokenForge.header(), validClaims), "token_malformed")
        assertRefused(try es256(TokenForge.header(), "\u{FEFF}" + validClaims), "claims_invalid")
    }

    func testSeededMutationsOfAValidTokenAreAllRefusedWithASlug() throws {
        let token = Array(try es256(TokenForge.header(), validClaims).utf8)
        var generator = SplitMix64(seed: 0x5E55_1015)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ".utf8)
        var refused = 0
        for _ in 0..<300 {
            var mutated = token
            let position = Int(generator.next() % UInt64(mutated.count))
            switch generator.next() % 3 {
            case 0: mutated[position] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
            case 1: mutated.remove(at: position)
            default: mutated.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: position)
            }
            if mutated == token { continue }
            do {
                _ = try verifier.verify(String(decoding: mutated, as: UTF8.self), now: now)
                XCTFail("accepted a mutated token")
            } catch {
                XCTAssertFalse(error.reason.isEmpty)
                refused += 1
            }
        }
        XCTAssertGreaterThan(refused, 250)
    }
}

/// A tiny deterministic generator (SplitMix64) so mutation tests replay exactly.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
