/// One attribute of an App Attest receipt's payload (Apple, "Assessing fraud risk", "Understand
/// the receipt"): `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
public struct ReceiptAttribute: Sendable, Equatable {
    /// The field type (Apple's numbers: 2 App ID, 3 attested public key, 4 client hash, 5 token,
    /// 6 receipt type, 12 creation time, 17 risk metric, 19 not before, 21 expiration time; 7, the
    /// environment, is seen in every receipt but not in Apple's table).
    public let type: Int
    /// The field's version (1 in every receipt seen).
    public let version: Int
    /// The OCTET STRING's contents.
    public let value: [UInt8]

    /// An attribute as read (or as a test expects it).
    public init(type: Int, version: Int, value: [UInt8]) {
        self.type = type
        self.version = version
        self.value = value
    }
}

/// Keyward's own reader for the receipt payload: `SET OF ReceiptAttribute`, strict DER, bounded.
///
/// Rules (each refusal `AppAttestError` `.receiptFieldsMalformed`): definite lengths in their
/// shortest form (no indefinite length, no long form under 128, no leading zero length bytes);
/// exactly one SET and nothing after it; every element a SEQUENCE of exactly INTEGER, INTEGER,
/// OCTET STRING, primitive tags only; INTEGERs minimally encoded, non-negative and at most
/// 0x7fffffff; at most ``maxAttributes`` attributes, a payload of at most ``maxBytes``. It never
/// recurses and never allocates more than it returns, so any input costs time linear in its size.
public enum ReceiptPayload {
    /// Most attributes accepted (Apple's receipts carry 8 to 10).
    public static let maxAttributes = 64
    /// Largest payload accepted, bytes (Apple's are about 1.3 KB, the attested certificate most of it).
    public static let maxBytes = 32 * 1024

    /// The attributes of `payload`, in encoded order.
    /// - Throws: `AppAttestError` `.receiptFieldsMalformed` naming the rule broken.
    public static func attributes(_ payload: [UInt8]) throws(AppAttestError) -> [ReceiptAttribute] {
        guard payload.count <= maxBytes else { throw malformed("payload longer than \(maxBytes) bytes") }
        var input = payload[...]
        let set = try element(&input, tag: 0x31, what: "SET")
        guard input.isEmpty else { throw malformed("bytes after the SET") }
        var members = set
        var attributes: [ReceiptAttribute] = []
        while !members.isEmpty {
            guard attributes.count < maxAttributes else { throw malformed("more than \(maxAttributes) attributes") }
            var sequence = try element(&members, tag: 0x30, what: "SEQUENCE")
            let type = try integer(&sequence, what: "type")
            let version = try integer(&sequence, what: "version")
            let value = try element(&sequence, tag: 0x04, what: "OCTET STRING")
            guard sequence.isEmpty else { throw malformed("more than three elements in an attribute") }
            attributes.append(ReceiptAttribute(type: type, version: version, value: Array(value)))
        }
        return attributes
    }

    /// One TLV with `tag` and a definite, shortest-form length; returns its contents and moves past it.
    private static func element(_ input: inout ArraySlice<UInt8>, tag: UInt8, what: String) throws(AppAttestError)
        -> ArraySlice<UInt8>
    {
        guard let first = input.first, first == tag else { throw malformed("expected \(what)") }
        var cursor = input.startIndex + 1
        guard cursor < input.endIndex else { throw malformed("\(what) has no length") }
        let lengthByte = input[cursor]
        cursor += 1
        var length = 0
        if lengthByte < 0x80 {
            length = Int(lengthByte)
        } else {
            let count = Int(lengthByte & 0x7f)
            // 0x80 is BER's indefinite length; more than 3 length bytes exceeds every bound here.
            guard count >= 1, count <= 3 else { throw malformed("\(what) length form not accepted") }
            guard input.endIndex - cursor >= count else { throw malformed("\(what) length truncated") }
            guard input[cursor] != 0 else { throw malformed("\(what) length has a leading zero byte") }
            for _ in 0..<count {
                length = length << 8 | Int(input[cursor])
                cursor += 1
            }
            guard length >= 0x80 else { throw malformed("\(what) length in long form below 128") }
        }
        guard length <= input.endIndex - cursor else { throw malformed("\(what) length exceeds the data") }
        let contents = input[cursor..<(cursor + length)]
        input = input[(cursor + length)...]
        return contents
    }

    /// A non-negative INTEGER of at most four content bytes, minimally encoded (X.690 §8.3.2).
    private static func integer(_ input: inout ArraySlice<UInt8>, what: String) throws(AppAttestError) -> Int {
        let contents = try element(&input, tag: 0x02, what: "INTEGER \(what)")
        guard let first = contents.first else { throw malformed("INTEGER \(what) is empty") }
        guard first & 0x80 == 0 else { throw malformed("INTEGER \(what) is negative") }
        guard contents.count <= 4 else { throw malformed("INTEGER \(what) is too large") }
        if contents.count > 1, first == 0, contents[contents.startIndex + 1] & 0x80 == 0 {
            throw malformed("INTEGER \(what) is not minimally encoded")
        }
        return contents.reduce(0) { $0 << 8 | Int($1) }
    }

    private static func malformed(_ detail: String) -> AppAttestError {
        AppAttestError(.receiptFieldsMalformed, "receipt payload: \(detail)")
    }
}
