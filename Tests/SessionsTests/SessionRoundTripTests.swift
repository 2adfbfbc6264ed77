import KeywardCrypto
import Sessions
import XCTest

final class SessionRoundTripTests: XCTestCase {
    private let now: Int64 = 1_800_000_000
    private let issuerName = "https://keyward.test"

    func testIssuedTokenVerifiesWithItsClaims() throws {
        let keys = try SessionKeySet(active: (kid: "k1", key: try ECPrivateKey.generate(.p256)))
        let issuer = try SessionIssuer(keys: keys, issuer: issuerName, ttlSeconds: 3600)
        let verifier = SessionVerifier(keys: keys, issuer: issuerName, maxTTLSeconds: 3600)
        let session = try issuer.issue(deviceID: "ab12", platform: .ios, now: now)
        XCTAssertEqual(session.expiresAt, now + 3600)
        let claims = try verifier.verify(session.token, now: now + 10)
        XCTAssertEqual(claims, SessionClaims(iss: issuerName, sub: "ab12", plat: "ios", iat: now, exp: now + 3600))
    }

    func testHeaderIsES256JWTWithKid() throws {
        let keys = try SessionKeySet(active: (kid: "k-2024_a", key: try ECPrivateKey.generate(.p256)))
        let token = try SessionIssuer(keys: keys, issuer: issuerName, ttlSeconds: 600).issue(deviceID: "d", platform: .android, now: now).token
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(segments.count, 3)
        XCTAssertEqual(Base64.decode(String(segments[0])).map { String(decoding: $0, as: UTF8.self) },
                       "{\"alg\":\"ES256\",\"typ\":\"JWT\",\"kid\":\"k-2024_a\"}")
        XCTAssertEqual(Base64.decode(String(segments[1])).map { String(decoding: $0, as: UTF8.self) },
                       "{\"iss\":\"https://keyward.test\",\"sub\":\"d\",\"plat\":\"android\",\"iat\":\(now),\"exp\":\(now + 600)}")
        XCTAssertEqual(Base64.decode(String(segments[2]))?.count, 64)
    }

    func testIssuerEscapesJSONInClaims() throws {
        let keys = try SessionKeySet(active: (kid: "k1", key: try ECPrivateKey.generate(.p256)))
        let odd = "a\"b\\c\n\u{1}é"
        let token = try SessionIssuer(keys: keys, issuer: odd, ttlSeconds: 600).issue(deviceID: odd, platform: .ios, now: now).token
        let claims = try SessionVerifier(keys: keys, issuer: odd, maxTTLSeconds: 600).verify(token, now: now)
        XCTAssertEqual(claims.iss, odd)
        XCTAssertEqual(claims.sub, odd)
    }

    func testSecondVerificationIsServedFromTheCacheAndStillExpires() throws {
        let keys = try SessionKeySet(active: (kid: "k1", key: try ECPrivateKey.generate(.p256)))
        let verifier = SessionVerifier(keys: keys, issuer: issuerName, maxTTLSeconds: 600, leewaySeconds: 0)
        let session = try SessionIssuer(keys: keys, issuer: issuerName, ttlSeconds: 600).issue(deviceID: "d", platform: .ios, now: now)
        XCTAssertNoThrow(try verifier.verify(session.token, now: now))
        XCTAssertEqual(verifier.cachedTokenCount, 1)
        XCTAssertNoThrow(try verifier.verify(session.token, now: now + 599))
        XCTAssertEqual(verifier.cachedTokenCount, 1)
        XCTAssertThrowsError(try verifier.verify(session.token, now: now + 600)) {
            XCTAssertEqual(($0 as? SessionError)?.reason, "token_expired")
        }
    }

    func testCacheIsBounded() throws {
        let keys = try SessionKeySet(active: (kid: "k1", key: try ECPrivateKey.generate(.p256)))
        let issuer = try SessionIssuer(keys: keys, issuer: issuerName, ttlSeconds: 600)
        let verifier = SessionVerifier(keys: keys, issuer: issuerName, maxTTLSeconds: 600, cacheCapacity: 3)
        for index in 0..<5 {
            XCTAssertNoThrow(try verifier.verify(try issuer.issue(deviceID: "d\(index)", platform: .ios, now: now).token, now: now))
        }
        XCTAssertLessThanOrEqual(verifier.cachedTokenCount, 3)
    }

    func testKeySetRefusesBadKidsDuplicatesAndP384Keys() throws {
        let key = try ECPrivateKey.generate(.p256)
        for kid in ["", "../k", "a/b", "k.1", "k 1", String(repeating: "a", count: 65)] {
            XCTAssertThrowsError(try SessionKeySet(active: (kid: kid, key: key))) {
                XCTAssertEqual(($0 as? SessionError)?.reason, "session_config_invalid")
            }
        }
        XCTAssertThrowsError(try SessionKeySet(active: (kid: "a", key: key), verifyOnly: [(kid: "a", key: key.publicKey)]))
        XCTAssertThrowsError(try SessionKeySet(active: (kid: "a", key: try ECPrivateKey.generate(.p384))))
        XCTAssertThrowsError(try SessionIssuer(keys: try SessionKeySet(active: (kid: "a", key: key)), issuer: issuerName, ttlSeconds: 59))
    }

    func testThumbprintKidMatchesRFC7638Shape() throws {
        let key = try ECPrivateKey.generate(.p256).publicKey
        let kid = SessionKeySet.thumbprintKID(for: key)
        XCTAssertEqual(kid.utf8.count, 43)
        XCTAssertTrue(SessionKeySet.isWellFormedKID(kid))
        XCTAssertEqual(kid, SessionKeySet.thumbprintKID(for: try ECPublicKey(x962: key.x962)))
    }
}
