import DeviceSimulator
import KeywardCrypto
import PlayIntegrity
import XCTest

/// Classic tokens: a JWE (A256KW + A256GCM) around a JWS (ES256), decrypted and verified locally.
final class ClassicTokenDecoderTests: XCTestCase {
    typealias F = VerdictFixture

    var keys: IntegrityTestKeys!
    var decoder: ClassicTokenDecoder!

    override func setUpWithError() throws {
        keys = try IntegrityTestKeys.generate()
        decoder = ClassicTokenDecoder(keys: try ClassicIntegrityKeys(
            decryptionKeyBase64: keys.decryptionKeyBase64, verificationKeyBase64: keys.verificationKeyBase64))
    }

    var verdict: AndroidIntegrityVerdict {
        AndroidIntegrityVerdict(request: .classic, packageName: F.packageName, challenge: F.challenge, installID: F.installID,
                                timestampMillis: F.nowMillis - 2_000, certificateDigest: F.certificateDigest)
    }

    func reason(_ token: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            _ = try decoder.decode(token)
            return nil
        } catch {
            return error.reason
        }
    }

    func testSimulatedTokenDecryptsVerifiesAndPassesThePolicy() throws {
        let decoded = try decoder.decode(try keys.classicToken(verdict))
        XCTAssertEqual(decoded.requestDetails?.nonce, AndroidIntegrityVerdict.bindingText(challenge: F.challenge, installID: F.installID))
        XCTAssertEqual(decoded.appIntegrity?.packageName, F.packageName)
        let accepted = try F.policy.verify(decoded, expecting: F.expectation(.classic), nowMillis: F.nowMillis)
        XCTAssertEqual(accepted.packageName, F.packageName)
    }

    func testJWEUnderAnotherDecryptionKeyIsRefused() throws {
        let other = IntegrityTestKeys(decryptionKey: SecureRandom.bytes(32), signingKey: keys.signingKey)
        XCTAssertEqual(reason(try other.classicToken(verdict)), "jwe_key_unwrap_failed")
    }

    func testJWSSignedByAnotherKeyIsRefused() throws {
        let other = try IntegrityTestKeys(decryptionKey: keys.decryptionKey, signingKey: ECPrivateKey.generate(.p256))
        XCTAssertEqual(reason(try other.classicToken(verdict)), "jws_signature_invalid")
    }

    func testAlgNoneIsRefused() throws {
        let unsigned = IntegrityJOSE.unsignedJWS(payload: verdict.json)
        XCTAssertEqual(reason(try IntegrityJOSE.encryptJWE(plaintext: Array(unsigned.utf8), kek: keys.decryptionKey)), "jws_algorithm_unsupported")
    }

    func testOtherSignatureAlgorithmsAreRefused() throws {
        for header in [#"{"alg":"HS256"}"#, #"{"alg":"ES384"}"#, #"{"alg":"RS256"}"#, #"{}"#] {
            let jws = try IntegrityJOSE.signJWS(header: header, payload: verdict.json, key: keys.signingKey)
            XCTAssertEqual(reason(try IntegrityJOSE.encryptJWE(plaintext: Array(jws.utf8), kek: keys.decryptionKey)), "jws_algorithm_unsupported", header)
        }
    }

    func testOtherKeyManagementAlgorithmsAreRefused() throws {
        let jws = Array(try IntegrityJOSE.signJWS(payload: verdict.json, key: keys.signingKey).utf8)
        for header in [#"{"alg":"dir","enc":"A256GCM"}"#, #"{"alg":"A128KW","enc":"A256GCM"}"#, #"{"alg":"RSA-OAEP-256","enc":"A256GCM"}"#, #"{"enc":"A256GCM"}"#] {
            XCTAssertEqual(reason(try IntegrityJOSE.encryptJWE(header: header, plaintext: jws, kek: keys.decryptionKey)), "jwe_algorithm_unsupported", header)
        }
        for header in [#"{"alg":"A256KW","enc":"A128GCM"}"#, #"{"alg":"A256KW","enc":"A256CBC-HS512"}"#, #"{"alg":"A256KW"}"#] {
            XCTAssertEqual(reason(try IntegrityJOSE.encryptJWE(header: header, plaintext: jws, kek: keys.decryptionKey)), "jwe_encryption_unsupported", header)
        }
    }

    func testCompressionAndCriticalExtensionsAreRefused() throws {
        let jws = Array(try IntegrityJOSE.signJWS(payload: verdict.json, key: keys.signingKey).utf8)
        XCTAssertEqual(reason(try IntegrityJOSE.encryptJWE(header: #"{"alg":"A256KW","enc":"A256GCM","zip":"DEF"}"#, plaintext: jws, kek: keys.decryptionKey)), "jwe_compression_unsupported")
        XCTAssertEqual(reason(try IntegrityJOSE.encryptJWE(header: #"{"alg":"A256KW","enc":"A256GCM","crit":["x"],"x":1}"#, plaintext: jws, kek: keys.decryptionKey)), "jwe_critical_header")
        let critical = try IntegrityJOSE.signJWS(header: #"{"alg":"ES256","crit":["b64"],"b64":false}"#, payload: verdict.json, key: keys.signingKey)
        XCTAssertEqual(reason(try IntegrityJOSE.encryptJWE(plaintext: Array(critical.utf8), kek: keys.decryptionKey)), "jws_critical_header")
    }

    func testAlteredCiphertextTagOrHeaderFailsTheTag() throws {
        let token = try keys.classicToken(verdict)
        var segments = token.split(separator: ".").map(String.init)
        for index in [3, 4] {
            var altered = segments
            var bytes = try XCTUnwrap(Base64.decode(altered[index]))
            bytes[0] ^= 0x01
            altered[index] = Base64.encodeURL(bytes)
            XCTAssertEqual(reason(altered.joined(separator: ".")), "jwe_decryption_failed", "segment \(index)")
        }
        // The same header with a space: same meaning, different AAD.
        segments[0] = Base64.encodeURL(Array(#"{"alg":"A256KW", "enc":"A256GCM"}"#.utf8))
        XCTAssertEqual(reason(segments.joined(separator: ".")), "jwe_decryption_failed")
    }

    func testPayloadSwappedUnderAValidSignatureHeaderFails() throws {
        let jws = try IntegrityJOSE.signJWS(payload: verdict.json, key: keys.signingKey)
        var parts = jws.split(separator: ".").map(String.init)
        var forged = verdict
        forged.packageName = "com.attacker"
        parts[1] = Base64.encodeURL(forged.json)
        XCTAssertEqual(reason(try IntegrityJOSE.encryptJWE(plaintext: Array(parts.joined(separator: ".").utf8), kek: keys.decryptionKey)), "jws_signature_invalid")
    }

    func testMalformedTokensAreRefusedAsMalformed() throws {
        let bareJWS = try IntegrityJOSE.signJWS(payload: verdict.json, key: keys.signingKey)
        let token = try keys.classicToken(verdict)
        for text in ["", "a.b.c.d", bareJWS, token + ".x", token.replacingOccurrences(of: "-", with: "+") + "+/=", "é.b.c.d.e"] {
            XCTAssertEqual(reason(text), "token_malformed", String(text.prefix(20)))
        }
    }

    func testOversizedTokenIsRefusedBeforeDecrypting() {
        XCTAssertEqual(reason(String(repeating: "A", count: 16 * 1024 + 1)), "token_too_large")
    }

    func testSignedPayloadThatIsNotAnObjectIsMalformedVerdict() throws {
        XCTAssertEqual(reason(try keys.classicToken(payload: Array("[1,2]".utf8))), "verdict_malformed")
    }

    func testKeysAreValidatedAtConfiguration() throws {
        func slug(_ aes: String, _ ec: String) -> String? {
            do { _ = try ClassicIntegrityKeys(decryptionKeyBase64: aes, verificationKeyBase64: ec); return nil } catch { return error.reason }
        }
        XCTAssertNil(slug(keys.decryptionKeyBase64, keys.verificationKeyBase64))
        XCTAssertEqual(slug(Base64.encode(SecureRandom.bytes(16)), keys.verificationKeyBase64), "classic_decryption_key_invalid")
        XCTAssertEqual(slug("***", keys.verificationKeyBase64), "classic_decryption_key_invalid")
        XCTAssertEqual(slug(keys.decryptionKeyBase64, Base64.encode([1, 2, 3])), "classic_verification_key_invalid")
        let p384 = try ECPrivateKey.generate(.p384)
        XCTAssertEqual(slug(keys.decryptionKeyBase64, Base64.encode(p384.publicKey.spkiDER)), "classic_verification_key_invalid")
    }

    func testErrorsNeverEchoTheToken() throws {
        let token = try keys.classicToken(verdict)
        var characters = Array(token)
        let index = characters.count - 10  // inside the authentication tag; always a different character
        characters[index] = characters[index] == "A" ? "B" : "A"
        let tampered = String(characters)
        do {
            _ = try decoder.decode(tampered)
            XCTFail("accepted a tampered token")
        } catch {
            XCTAssertFalse(error.description.contains(String(token.prefix(12))))
        }
    }
}
