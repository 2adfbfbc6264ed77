import KeywardCrypto
import XCTest

final class AESGCMTests: XCTestCase {
    private func hex(_ text: String) -> [UInt8] { Hex.decode(text) ?? [] }

    /// McGrew & Viega, "The Galois/Counter Mode of Operation", Test Case 14 (AES-256, one zero block).
    func testSealMatchesGCMSpecTestCase14() throws {
        let sealed = try AESGCM.seal(key: [UInt8](repeating: 0, count: 32), iv: [UInt8](repeating: 0, count: 12),
                                     plaintext: [UInt8](repeating: 0, count: 16), aad: [])
        XCTAssertEqual(Hex.encode(sealed.ciphertext), "cea7403d4d606b6e074ec5d3baf39d18")
        XCTAssertEqual(Hex.encode(sealed.tag), "d0d1c8a799996bf0265b98b5d48ab919")
    }

    /// Test Case 16 (AES-256, 60-byte plaintext, 20-byte AAD).
    func testOpenMatchesGCMSpecTestCase16() throws {
        let key = hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let iv = hex("cafebabefacedbaddecaf888")
        let aad = hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let plaintext = hex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
        let ciphertext = hex("522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662")
        let tag = hex("76fc6ece0f4e1768cddf8853bb2d551b")
        XCTAssertEqual(try AESGCM.open(key: key, iv: iv, ciphertext: ciphertext, tag: tag, aad: aad), plaintext)
        let sealed = try AESGCM.seal(key: key, iv: iv, plaintext: plaintext, aad: aad)
        XCTAssertEqual(sealed.ciphertext, ciphertext)
        XCTAssertEqual(sealed.tag, tag)
    }

    func testOpenRefusesTamperedCiphertextTagOrAAD() throws {
        let key = SecureRandom.bytes(32), iv = SecureRandom.bytes(12)
        let sealed = try AESGCM.seal(key: key, iv: iv, plaintext: Array("secret".utf8), aad: [1, 2])
        var ciphertext = sealed.ciphertext
        ciphertext[0] ^= 1
        var tag = sealed.tag
        tag[15] ^= 1
        for attempt in [(ciphertext, sealed.tag, [UInt8]([1, 2])), (sealed.ciphertext, tag, [1, 2]), (sealed.ciphertext, sealed.tag, [1, 3])] {
            XCTAssertThrowsError(try AESGCM.open(key: key, iv: iv, ciphertext: attempt.0, tag: attempt.1, aad: attempt.2)) {
                XCTAssertEqual(($0 as? CryptoError)?.reason, "authentication_failed")
            }
        }
        XCTAssertEqual(try AESGCM.open(key: key, iv: iv, ciphertext: sealed.ciphertext, tag: sealed.tag, aad: [1, 2]), Array("secret".utf8))
    }

    func testWrongLengthsAreInvalidInput() {
        XCTAssertThrowsError(try AESGCM.seal(key: [UInt8](repeating: 0, count: 16), iv: [UInt8](repeating: 0, count: 12), plaintext: [], aad: [])) {
            XCTAssertEqual(($0 as? CryptoError)?.reason, "invalid_input")
        }
        XCTAssertThrowsError(try AESGCM.open(key: [UInt8](repeating: 0, count: 32), iv: [UInt8](repeating: 0, count: 12), ciphertext: [], tag: [0, 1], aad: [])) {
            XCTAssertEqual(($0 as? CryptoError)?.reason, "invalid_input")
        }
    }
}

final class AESKeyWrapTests: XCTestCase {
    /// RFC 3394 §4.6: 256 bits of key data with a 256-bit KEK.
    func testWrapAndUnwrapMatchRFC3394Section4_6() throws {
        let kek = Hex.decode("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F") ?? []
        let key = Hex.decode("00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F") ?? []
        let wrapped = Hex.decode("28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21") ?? []
        XCTAssertEqual(try AESKeyWrap.wrap(kek: kek, key: key), wrapped)
        XCTAssertEqual(try AESKeyWrap.unwrap(kek: kek, wrapped: wrapped), key)
    }

    func testUnwrapRefusesTamperingAndBadLengths() throws {
        let kek = SecureRandom.bytes(32)
        var wrapped = try AESKeyWrap.wrap(kek: kek, key: SecureRandom.bytes(32))
        wrapped[3] ^= 0x40
        XCTAssertThrowsError(try AESKeyWrap.unwrap(kek: kek, wrapped: wrapped)) {
            XCTAssertEqual(($0 as? CryptoError)?.reason, "authentication_failed")
        }
        XCTAssertThrowsError(try AESKeyWrap.unwrap(kek: kek, wrapped: Array(wrapped.dropLast()))) {
            XCTAssertEqual(($0 as? CryptoError)?.reason, "invalid_input")
        }
        XCTAssertThrowsError(try AESKeyWrap.unwrap(kek: Array(kek.dropLast()), wrapped: wrapped)) {
            XCTAssertEqual(($0 as? CryptoError)?.reason, "invalid_input")
        }
    }
}

final class RSATests: XCTestCase {
    func testRS256SignatureVerifiesAndSurvivesPEMRoundTrip() throws {
        let key = try RSAPrivateKey.generate(bits: 2048)
        let message = Array("header.payload".utf8)
        let signature = try key.signSHA256(message)
        XCTAssertEqual(signature.count, 256)
        XCTAssertTrue(key.publicKey.isValidSignatureSHA256(signature, message: message))
        XCTAssertFalse(key.publicKey.isValidSignatureSHA256(signature, message: message + [0]))
        let reloaded = try RSAPrivateKey(pkcs8PEM: try key.pkcs8PEM)
        let publicKey = try RSAPublicKey(pem: try reloaded.publicKeyPEM)
        XCTAssertTrue(publicKey.isValidSignatureSHA256(try reloaded.signSHA256(message), message: message))
        XCTAssertTrue(publicKey.isValidSignatureSHA256(signature, message: message))
    }

    func testRSAPublicKeyRefusesAnECKey() throws {
        let ec = try ECPrivateKey.generate(.p256)
        XCTAssertThrowsError(try RSAPublicKey(pem: ec.publicKey.pem)) { XCTAssertEqual(($0 as? CryptoError)?.reason, "invalid_key") }
    }
}
