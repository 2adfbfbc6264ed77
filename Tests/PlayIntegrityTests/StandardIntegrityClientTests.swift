import DeviceSimulator
import Foundation
import KeywardCrypto
import PlayIntegrity
import XCTest

/// Standard mode against the in-process fake Google: OAuth (RFC 7523) caching and refusal, decode, and
/// the error kinds the server maps to 401 / 500 / 502.
final class StandardIntegrityClientTests: XCTestCase {
    typealias F = VerdictFixture

    /// Seconds; the fake's clock and the client's start equal.
    static let now: Int64 = F.nowMillis / 1_000
    /// One RSA key for the whole class: generation costs up to a second.
    nonisolated(unsafe) static var sharedAccount: SimulatedServiceAccount?

    var google: InMemoryGoogle!
    var account: SimulatedServiceAccount!
    var keyFile: KeyFileBox!
    var client: StandardIntegrityClient!

    override func setUpWithError() throws {
        if Self.sharedAccount == nil { Self.sharedAccount = try SimulatedServiceAccount.generate() }
        account = try XCTUnwrap(Self.sharedAccount)
        google = InMemoryGoogle(now: Self.now)
        google.fake.trust(account)
        keyFile = KeyFileBox(try account.keyFile(tokenURI: google.fake.tokenURL))
        let box = keyFile!
        client = StandardIntegrityClient(
            endpoints: GoogleEndpoints(playIntegrityBaseURL: InMemoryGoogle.baseURL, tokenURL: nil),
            serviceAccount: { try box.read() },
            http: google)
    }

    func standardToken(packageName: String = F.packageName) -> String {
        var verdict = AndroidIntegrityVerdict(request: .standard, packageName: packageName, challenge: F.challenge, installID: F.installID,
                                              timestampMillis: F.nowMillis - 1_000, certificateDigest: F.certificateDigest)
        verdict.packageName = packageName
        return google.fake.issueStandardToken(verdict)
    }

    func reason(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch { return (error as? PlayIntegrityError)?.reason ?? "\(error)" }
    }

    func kind(_ body: () throws -> Void) -> PlayIntegrityError? {
        do { try body(); return nil } catch { return error as? PlayIntegrityError }
    }

    // MARK: decode

    func testStandardTokenDecodesThroughGoogleAndPassesThePolicy() throws {
        let authorization = try client.authorize(now: Self.now)
        let verdict = try client.decode(integrityToken: standardToken(), packageName: F.packageName, authorization: authorization)
        let accepted = try F.policy.verify(verdict, expecting: F.expectation(.standard), nowMillis: F.nowMillis)
        XCTAssertEqual(accepted.packageName, F.packageName)
        XCTAssertEqual(google.fake.decodeCount, 1)
    }

    func testDecodeRequestIsWhatGoogleDocuments() throws {
        let token = standardToken()
        _ = try client.decode(integrityToken: token, packageName: F.packageName, authorization: try client.authorize(now: Self.now))
        let request = try XCTUnwrap(google.requests.last)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.url, "http://fake-google.test/v1/dev.keyward.demo:decodeIntegrityToken")
        XCTAssertTrue(request.header("authorization")?.hasPrefix("Bearer ya29.fake-") ?? false)
        XCTAssertEqual(request.header("content-type"), "application/json")
        let body = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: String])
        XCTAssertEqual(body, ["integrity_token": token])
    }

    func testUnknownTokenOrTokenOfAnotherPackageIsRejected() throws {
        let authorization = try client.authorize(now: Self.now)
        XCTAssertEqual(reason { _ = try client.decode(integrityToken: "forged", packageName: F.packageName, authorization: authorization) }, "token_invalid")
        let foreign = standardToken(packageName: "dev.keyward.other")
        XCTAssertEqual(kind { _ = try client.decode(integrityToken: foreign, packageName: F.packageName, authorization: authorization) },
                       .rejected(reason: "token_invalid", detail: "Google refused the integrity token (HTTP 400)"))
    }

    func testInputIsCheckedBeforeCallingGoogle() throws {
        let authorization = try client.authorize(now: Self.now)
        let before = google.fake.decodeCount
        XCTAssertEqual(reason { _ = try client.decode(integrityToken: String(repeating: "t", count: 16 * 1024 + 1), packageName: F.packageName, authorization: authorization) }, "token_too_large")
        XCTAssertEqual(reason { _ = try client.decode(integrityToken: "", packageName: F.packageName, authorization: authorization) }, "token_malformed")
        for package in ["dev.keyward.demo/../../x", "dev", "dev..x", "dev.keyward:x", "dév.x"] {
            XCTAssertEqual(reason { _ = try client.decode(integrityToken: "t", packageName: package, authorization: authorization) }, "package_name_invalid", package)
        }
        XCTAssertEqual(google.fake.decodeCount, before)
    }

    // MARK: Google unavailable

    func testGoogleUnreachableOrFailingIsUnavailableNotRejected() throws {
        let authorization = try client.authorize(now: Self.now)
        google.fake.setDecodeOutage(503)
        XCTAssertEqual(kind { _ = try client.decode(integrityToken: standardToken(), packageName: F.packageName, authorization: authorization) },
                       .googleUnavailable(reason: "google_server_error", detail: "decodeIntegrityToken answered HTTP 503"))
        google.fake.setDecodeOutage(429)
        XCTAssertEqual(reason { _ = try client.decode(integrityToken: standardToken(), packageName: F.packageName, authorization: authorization) }, "google_quota_exceeded")
        google.fake.setDecodeOutage(nil)
        google.setUnreachable(true)
        guard case .googleUnavailable(reason: "google_unreachable", _)? = kind({ _ = try client.decode(integrityToken: standardToken(), packageName: F.packageName, authorization: authorization) }) else {
            return XCTFail("expected google_unreachable")
        }
    }

    func testTokenEndpointUnreachableOrFailingIsUnavailableWithoutBackoff() throws {
        google.setUnreachable(true)
        guard case .googleUnavailable(reason: "google_unreachable", _)? = kind({ _ = try client.authorize(now: Self.now) }) else {
            return XCTFail("expected google_unreachable")
        }
        google.setUnreachable(false)
        google.fake.setTokenOutage(500)
        guard case .googleUnavailable(reason: "google_oauth_unavailable", _)? = kind({ _ = try client.authorize(now: Self.now) }) else {
            return XCTFail("expected google_oauth_unavailable")
        }
        google.fake.setTokenOutage(nil)
        XCTAssertNoThrow(try client.authorize(now: Self.now + 1), "a 5xx is Google's fault: no backoff")
    }

    // MARK: OAuth

    func testAssertionIsAnRS256JWTBearerGrant() throws {
        _ = try client.authorize(now: Self.now)
        let request = try XCTUnwrap(google.requests.first)
        XCTAssertEqual(request.url, google.fake.tokenURL)
        XCTAssertEqual(request.header("content-type"), "application/x-www-form-urlencoded")
        let form = String(decoding: request.body, as: UTF8.self)
        XCTAssertTrue(form.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="))
        let jwt = try XCTUnwrap(form.split(separator: "=").last).split(separator: ".").map(String.init)
        XCTAssertEqual(jwt.count, 3)
        let header = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(Base64.decode(jwt[0])))) as? [String: String])
        XCTAssertEqual(header, ["alg": "RS256", "typ": "JWT", "kid": account.privateKeyID])
        let claims = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(Base64.decode(jwt[1])))) as? [String: Any])
        XCTAssertEqual(claims["iss"] as? String, account.clientEmail)
        XCTAssertEqual(claims["scope"] as? String, "https://www.googleapis.com/auth/playintegrity")
        XCTAssertEqual(claims["aud"] as? String, google.fake.tokenURL)
        XCTAssertEqual((claims["iat"] as? NSNumber)?.int64Value, Self.now)
        XCTAssertEqual((claims["exp"] as? NSNumber)?.int64Value, Self.now + 3600)
        let signature = try XCTUnwrap(Base64.decode(jwt[2]))
        XCTAssertTrue(account.privateKey.publicKey.isValidSignatureSHA256(signature, message: Array("\(jwt[0]).\(jwt[1])".utf8)))
    }

    func testAccessTokenIsCachedUntilSixtySecondsBeforeExpiry() throws {
        let first = try client.authorize(now: Self.now)
        XCTAssertEqual(first.expiresAt, Self.now + 3599)
        XCTAssertEqual(try client.authorize(now: Self.now + 3538).expiresAt, first.expiresAt)
        XCTAssertEqual(google.fake.tokenRequestCount, 1)
        google.fake.setNow(Self.now + 3539)
        let second = try client.authorize(now: Self.now + 3539)
        XCTAssertEqual(google.fake.tokenRequestCount, 2)
        XCTAssertEqual(second.expiresAt, Self.now + 3539 + 3599)
    }

    func testAuthorizationNeverPrintsTheAccessToken() throws {
        let authorization = try client.authorize(now: Self.now)
        XCTAssertFalse("\(authorization)".contains("ya29"))
        XCTAssertFalse(String(reflecting: authorization).contains("ya29"))
        var dumped = ""
        dump(authorization, to: &dumped)
        XCTAssertFalse(dumped.contains("ya29"))
    }

    func testRefusedCredentialsDropTheTokenAndWaitAMinute() throws {
        google.fake.revokeKeys(of: account.clientEmail)
        XCTAssertEqual(kind { _ = try client.authorize(now: Self.now) },
                       .misconfigured(reason: "google_oauth_refused", detail: "the OAuth token endpoint refused the service account (HTTP 400)"))
        XCTAssertEqual(reason { _ = try client.authorize(now: Self.now + 59) }, "google_oauth_backoff")
        XCTAssertEqual(google.fake.tokenRequestCount, 1, "no request to Google while backing off")
        google.fake.trust(account)
        XCTAssertNoThrow(try client.authorize(now: Self.now + 60))
        XCTAssertEqual(google.fake.tokenRequestCount, 2)
    }

    func testRotatedServiceAccountKeyIsPickedUpWithoutRestart() throws {
        let old = try client.authorize(now: Self.now)
        // The operator creates a new key, deletes the old one, and replaces the key file.
        let rotated = SimulatedServiceAccount(clientEmail: account.clientEmail, privateKeyID: "rotated", privateKey: try RSAPrivateKey.generate(bits: 2048))
        google.fake.revokeKeys(of: account.clientEmail)
        google.fake.trust(rotated)
        keyFile.set(try rotated.keyFile(tokenURI: google.fake.tokenURL))
        // The old access token stays valid until it expires, as with Google …
        XCTAssertEqual(try client.authorize(now: Self.now + 100).expiresAt, old.expiresAt)
        // … and the next fetch signs with the new key.
        google.fake.setNow(old.expiresAt - 60)
        let fresh = try client.authorize(now: old.expiresAt - 60)
        XCTAssertNotEqual(fresh.expiresAt, old.expiresAt)
        XCTAssertNoThrow(try client.decode(integrityToken: standardToken(), packageName: F.packageName, authorization: fresh))
    }

    func testRotationAfterARefusalIsPickedUpAfterTheMinute() throws {
        google.fake.revokeKeys(of: account.clientEmail)
        XCTAssertEqual(reason { _ = try client.authorize(now: Self.now) }, "google_oauth_refused")
        let rotated = SimulatedServiceAccount(clientEmail: account.clientEmail, privateKeyID: "rotated", privateKey: try RSAPrivateKey.generate(bits: 2048))
        google.fake.trust(rotated)
        keyFile.set(try rotated.keyFile(tokenURI: google.fake.tokenURL))
        XCTAssertNoThrow(try client.authorize(now: Self.now + 60))
    }

    func testUnreadableOrInvalidKeyFileIsMisconfiguration() {
        keyFile.set(nil)
        XCTAssertEqual(reason { _ = try client.authorize(now: Self.now) }, "service_account_unreadable")
        keyFile.set(Array(#"{"type":"service_account","client_email":"a@b"}"#.utf8))
        XCTAssertEqual(kind { _ = try client.authorize(now: Self.now) },
                       .misconfigured(reason: "service_account_invalid", detail: "the service-account key has no private_key"))
        keyFile.set(Array(#"{"client_email":"a@b","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n","token_uri":"http://fake-google.test/token"}"#.utf8))
        XCTAssertEqual(reason { _ = try client.authorize(now: Self.now) }, "service_account_invalid")
        XCTAssertEqual(google.fake.tokenRequestCount, 0)
    }

    func testGoogle401DropsTheCachedToken() throws {
        let authorization = try client.authorize(now: Self.now)
        google.fake.setNow(Self.now + 3600)   // Google expired it while Keyward's clock says it is fresh
        XCTAssertEqual(reason { _ = try client.decode(integrityToken: standardToken(), packageName: F.packageName, authorization: authorization) }, "google_unauthorized")
        _ = try client.authorize(now: Self.now + 1)
        XCTAssertEqual(google.fake.tokenRequestCount, 2)
    }

    /// The ordering the server follows: authorize, spend the device's budget, decode. An OAuth failure
    /// spends nothing and reaches no decode.
    func testOAuthFailureSpendsNoBudgetAndDecodesNothing() throws {
        var budget = 2
        func attest() throws -> IntegrityVerdict {
            let authorization = try client.authorize(now: Self.now)
            guard budget > 0 else { throw PlayIntegrityError.rejected(reason: "budget_exhausted", detail: "test budget") }
            budget -= 1
            return try client.decode(integrityToken: standardToken(), packageName: F.packageName, authorization: authorization)
        }
        google.fake.revokeKeys(of: account.clientEmail)
        XCTAssertEqual(reason { _ = try attest() }, "google_oauth_refused")
        XCTAssertEqual(budget, 2)
        XCTAssertEqual(google.fake.decodeCount, 0)
    }
}
