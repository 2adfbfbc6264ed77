import AppAttest
import CBOR
import KeywardCrypto
import XCTest

/// Test-only DER surgery: replaces a certificate's SubjectPublicKeyInfo and re-signs it, to make a
/// credential certificate with a key X509CertificateBuilder cannot put there (RSA). Nothing else in
/// the certificate changes, so the nonce extension still matches the attestation's authData.
enum CertificateSurgery {
    /// One DER TLV: the whole element and its contents' range.
    struct Element {
        let whole: ArraySlice<UInt8>
        let contents: ArraySlice<UInt8>
    }

    /// The elements directly inside `bytes` (a sequence of TLVs).
    static func elements(_ bytes: ArraySlice<UInt8>) throws -> [Element] {
        var result: [Element] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let start = index
            index += 1  // tag (all single-byte here)
            var length = Int(bytes[index])
            index += 1
            if length & 0x80 != 0 {
                let count = length & 0x7f
                length = 0
                for _ in 0..<count {
                    length = length << 8 | Int(bytes[index])
                    index += 1
                }
            }
            guard index + length <= bytes.endIndex else { throw CryptoError.invalidInput("DER overrun") }
            result.append(Element(whole: bytes[start..<(index + length)], contents: bytes[index..<(index + length)]))
            index += length
        }
        return result
    }

    /// A TLV with a definite, minimal length.
    static func encode(tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        var length: [UInt8]
        if contents.count < 0x80 {
            length = [UInt8(contents.count)]
        } else {
            var bytes: [UInt8] = []
            var value = contents.count
            while value > 0 {
                bytes.insert(UInt8(value & 0xff), at: 0)
                value >>= 8
            }
            length = [0x80 | UInt8(bytes.count)] + bytes
        }
        return [tag] + length + contents
    }

    /// `certificate` with its SPKI replaced by `spki` and re-signed by `issuerKey` (P-384, so the
    /// signature algorithm becomes ecdsa-with-SHA384).
    static func replacingPublicKey(of certificate: [UInt8], with spki: [UInt8], issuerKey: ECPrivateKey) throws -> [UInt8] {
        let outer = try elements(certificate[...])
        let parts = try elements(try XCTUnwrap(outer.first).contents)  // tbs, algorithm, signature
        XCTAssertEqual(parts.count, 3)
        var tbsFields = try elements(parts[0].contents)  // [0] version, serial, signature alg, issuer, validity, subject, spki, [3] ext
        XCTAssertEqual(tbsFields.count, 8)
        let sha256Algorithm: [UInt8] = [0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]
        let sha384Algorithm: [UInt8] = [0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03]
        var tbsContents: [UInt8] = []
        for (index, field) in tbsFields.enumerated() {
            if index == 2 {
                XCTAssertEqual(Array(field.whole), sha256Algorithm)
                tbsContents += sha384Algorithm
            } else if index == 6 {
                tbsContents += spki
            } else {
                tbsContents += field.whole
            }
        }
        tbsFields = []
        let tbs = encode(tag: 0x30, tbsContents)
        let signature = try issuerKey.signatureDER(message: tbs)
        return encode(tag: 0x30, tbs + sha384Algorithm + encode(tag: 0x03, [0x00] + signature))
    }

    /// The attestation with x5c[0] replaced by `leaf` (everything else byte-identical).
    static func replacingLeaf(in attestation: [UInt8], with leaf: [UInt8]) throws -> [UInt8] {
        let decoded = try CBORDecoder().decode(attestation)
        let entries = try XCTUnwrap(decoded.mapEntries)
        let rebuilt = entries.map { entry -> CBORMapEntry in
            guard entry.key == .text("attStmt"), let statement = entry.value.mapEntries else { return entry }
            return CBORMapEntry(key: entry.key, value: .map(statement.map { inner in
                guard inner.key == .text("x5c"), var x5c = inner.value.arrayValue else { return inner }
                x5c[0] = .bytes(leaf)
                return CBORMapEntry(key: inner.key, value: .array(x5c))
            }))
        }
        return CBOREncoder.encode(.map(rebuilt))
    }
}
