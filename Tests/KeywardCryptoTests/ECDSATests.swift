@testable import KeywardCrypto
import XCTest

final class ECDSATests: XCTestCase {
    private let message = Array("keyward".utf8)

    func testP256RawAndDERSignaturesVerify() throws {
        let key = try ECPrivateKey.generate(.p256)
        let raw = try key.signatureRaw(message: message)
        let der = try key.signatureDER(message: message)
        XCTAssertEqual(raw.count, 64)
        XCTAssertEqual(key.publicKey.x962.count, 65)
        XCTAssertTrue(key.publicKey.isValidSignature(raw: raw, message: message))
        XCTAssertTrue(key.publicKey.isValidSignature(der: der, message: message))
        XCTAssertFalse(key.publicKey.isValidSignature(raw: raw, message: message + [0]))
        XCTAssertFalse(key.publicKey.isValidSignature(der: der, message: message + [0]))
    }

    func testP384RawAndDERSignaturesVerify() throws {
        let key = try ECPrivateKey.generate(.p384)
        let raw = try key.signatureRaw(message: message)
        XCTAssertEqual(raw.count, 96)
        XCTAssertEqual(key.publicKey.x962.count, 97)
        XCTAssertEqual(key.publicKey.curve, .p384)
        XCTAssertTrue(key.publicKey.isValidSignature(raw: raw, message: message))
        XCTAssertTrue(key.publicKey.isValidSignature(der: try key.signatureDER(message: message), message: message))
    }

    func testSignatureByAnotherKeyIsInvalid() throws {
        let key = try ECPrivateKey.generate(.p256), other = try ECPrivateKey.generate(.p256)
        XCTAssertFalse(other.publicKey.isValidSignature(raw: try key.signatureRaw(message: message), message: message))
    }

    func testRawSignatureOfWrongLengthOrZeroIsInvalid() throws {
        let key = try ECPrivateKey.generate(.p256)
        let raw = try key.signatureRaw(message: message)
        XCTAssertFalse(key.publicKey.isValidSignature(raw: Array(raw.dropLast()), message: message))
        XCTAssertFalse(key.publicKey.isValidSignature(raw: raw + [0], message: message))
        XCTAssertFalse(key.publicKey.isValidSignature(raw: [UInt8](repeating: 0, count: 64), message: message))
        XCTAssertFalse(key.publicKey.isValidSignature(raw: [], message: message))
        // A DER signature handed in as raw bytes is refused by length or by value.
        XCTAssertFalse(key.publicKey.isValidSignature(raw: try key.signatureDER(message: message), message: message))
    }

    func testDERSignatureWithTrailingByteOrNonMinimalEncodingIsInvalid() throws {
        let key = try ECPrivateKey.generate(.p256)
        let der = try key.signatureDER(message: message)
        XCTAssertFalse(key.publicKey.isValidSignature(der: der + [0], message: message))
        // Re-encode r with a superfluous leading zero: same numbers, non-DER bytes.
        let raw = try key.signatureRaw(message: message)
        var padded: [UInt8] = [0x02, 0x22, 0x00, 0x00] + raw[0..<32]
        padded += [0x02, 0x20] + raw[32..<64]
        let bad: [UInt8] = [0x30, UInt8(padded.count)] + padded
        XCTAssertFalse(key.publicKey.isValidSignature(der: bad, message: message))
    }

    func testPublicKeyLoadsFromX962SPKIAndPEMAlike() throws {
        let key = try ECPrivateKey.generate(.p256).publicKey
        XCTAssertEqual(try ECPublicKey(x962: key.x962), key)
        XCTAssertEqual(try ECPublicKey(spkiDER: key.spkiDER), key)
        XCTAssertEqual(try ECPublicKey(pem: key.pem), key)
        XCTAssertEqual(key.spkiDER.count, 91)
    }

    func testCompressedPointSPKIIsReadAsTheSameKey() throws {
        let key = try ECPrivateKey.generate(.p256).publicKey
        // RFC 5480 §2.2 compressed form: 02/03 by the parity of Y, then X.
        let parity: UInt8 = (key.x962[64] & 1) == 0 ? 0x02 : 0x03
        let algorithm: [UInt8] = [0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
                                  0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        let spki: [UInt8] = [0x30, 0x39] + algorithm + [0x03, 0x22, 0x00, parity] + key.x962[1...32]
        let loaded = try ECPublicKey(spkiDER: spki)
        XCTAssertEqual(loaded.x962, key.x962)
        XCTAssertEqual(loaded.spkiDER, key.spkiDER)
    }

    func testP384KeyLoadsFromSPKIAndVerifies() throws {
        let key = try ECPrivateKey.generate(.p384)
        let loaded = try ECPublicKey(spkiDER: key.publicKey.spkiDER)
        XCTAssertEqual(loaded.curve, .p384)
        XCTAssertEqual(key.publicKey.spkiDER.count, 120)
        XCTAssertTrue(loaded.isValidSignature(der: try key.signatureDER(message: message), message: message))
    }

    func testPublicKeyRefusesOffCurveCompressedAndTruncatedPoints() throws {
        let key = try ECPrivateKey.generate(.p256).publicKey
        var offCurve = key.x962
        offCurve[64] ^= 0x01
        XCTAssertThrowsError(try ECPublicKey(x962: offCurve)) { XCTAssertEqual(($0 as? CryptoError)?.reason, "invalid_key") }
        XCTAssertThrowsError(try ECPublicKey(x962: Array(key.x962.prefix(64))))
        var compressedMarker = key.x962
        compressedMarker[0] = 0x02
        XCTAssertThrowsError(try ECPublicKey(x962: compressedMarker))
        XCTAssertThrowsError(try ECPublicKey(spkiDER: key.spkiDER + [0]))
        XCTAssertThrowsError(try ECPublicKey(spkiDER: key.curve.spkiPrefix + offCurve)) {
            XCTAssertEqual(($0 as? CryptoError)?.reason, "invalid_key")
        }
        XCTAssertThrowsError(try ECPublicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
    }

    func testPrivateKeyPKCS8PEMRoundTripKeepsTheKey() throws {
        let key = try ECPrivateKey.generate(.p256)
        let pem = try key.pkcs8PEM
        XCTAssertTrue(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let loaded = try ECPrivateKey(pkcs8PEM: pem)
        XCTAssertEqual(loaded.publicKey, key.publicKey)
        XCTAssertTrue(key.publicKey.isValidSignature(raw: try loaded.signatureRaw(message: message), message: message))
    }

    func testPrivateKeyRefusesRSAAndGarbage() throws {
        XCTAssertThrowsError(try ECPrivateKey(pkcs8PEM: "not a key")) { XCTAssertEqual(($0 as? CryptoError)?.reason, "invalid_key") }
        let rsa = try RSAPrivateKey.generate(bits: 2048)
        XCTAssertThrowsError(try ECPrivateKey(pkcs8PEM: try rsa.pkcs8PEM)) { XCTAssertEqual(($0 as? CryptoError)?.reason, "invalid_key") }
    }
}
