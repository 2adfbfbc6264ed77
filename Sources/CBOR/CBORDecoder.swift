/// A strict, bounded CBOR decoder (RFC 8949) for attacker-controlled input.
///
/// What it refuses, each as a `CBORError` value (never a trap):
/// - indefinite lengths and "break" (RFC 8949 §3.2): App Attest and WebAuthn use definite lengths only;
/// - duplicate map keys (RFC 8949 §5.6), compared as decoded values;
/// - bytes after the top-level item (`decode`), reserved additional information 28–30;
/// - floats and simple values other than false/true/null/undefined (`unsupported`);
/// - text strings that are not UTF-8;
/// - nesting deeper than `limits.maxDepth`, and any length or count larger than the bytes that remain
///   (or than `limits`) — checked *before* anything is allocated, so a 9-byte head cannot ask for 2^64 bytes.
public struct CBORDecoder: Sendable {
    /// Bounds applied while decoding.
    public struct Limits: Sendable {
        /// Deepest nesting of arrays, maps and tags; the top-level item is depth 1.
        public var maxDepth: Int
        /// Longest byte or text string, in bytes.
        public var maxStringLength: Int
        /// Most elements in one array, or entries in one map.
        public var maxCollectionCount: Int

        /// Defaults suit generic small documents; App Attest's parsers pass tighter ones.
        public init(maxDepth: Int = 16, maxStringLength: Int = 1 << 20, maxCollectionCount: Int = 1 << 16) {
            self.maxDepth = maxDepth
            self.maxStringLength = maxStringLength
            self.maxCollectionCount = maxCollectionCount
        }
    }

    /// The bounds this decoder enforces.
    public let limits: Limits

    /// A decoder enforcing `limits`.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Decodes exactly one item that spans all of `bytes`.
    /// - Throws: `CBORError`; `.trailingBytes` if anything follows the item.
    public func decode(_ bytes: [UInt8]) throws(CBORError) -> CBORValue {
        let (value, consumed) = try decodePrefix(bytes[...])
        guard consumed == bytes.count else { throw .trailingBytes(offset: consumed) }
        return value
    }

    /// Decodes one item at the start of `bytes` and says how many bytes it took; the rest is ignored.
    /// Used where a format places CBOR before other data (WebAuthn authenticatorData, credential key).
    /// Error offsets are relative to `bytes.startIndex`.
    /// - Throws: `CBORError`.
    public func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(CBORError) -> (CBORValue, consumed: Int) {
        var reader = Reader(bytes: bytes, limits: limits)
        let value = try reader.item(depth: 1)
        return (value, reader.position - bytes.startIndex)
    }
}

/// The cursor over the input. Every read checks the remaining length first.
private struct Reader {
    let bytes: ArraySlice<UInt8>
    let limits: CBORDecoder.Limits
    var position: Int

    init(bytes: ArraySlice<UInt8>, limits: CBORDecoder.Limits) {
        self.bytes = bytes
        self.limits = limits
        self.position = bytes.startIndex
    }

    var offset: Int { position - bytes.startIndex }
    var remaining: Int { bytes.endIndex - position }

    mutating func byte() throws(CBORError) -> UInt8 {
        guard position < bytes.endIndex else { throw .truncated(offset: offset) }
        let value = bytes[position]
        position += 1
        return value
    }

    /// The argument of a head (RFC 8949 §3): the additional information itself, or 1/2/4/8 following bytes.
    mutating func argument(_ info: UInt8, headOffset: Int) throws(CBORError) -> UInt64 {
        switch info {
        case 0..<24:
            return UInt64(info)
        case 24, 25, 26, 27:
            let width = 1 << Int(info - 24)
            guard remaining >= width else { throw .truncated(offset: offset) }
            var value: UInt64 = 0
            for index in position..<(position + width) { value = value << 8 | UInt64(bytes[index]) }
            position += width
            return value
        case 31:
            throw .indefiniteLength(offset: headOffset)
        default:
            throw .reservedAdditionalInfo(offset: headOffset)
        }
    }

    /// A string length, checked against the limit and the remaining input before any allocation.
    mutating func stringLength(_ argument: UInt64, headOffset: Int) throws(CBORError) -> Int {
        guard argument <= UInt64(limits.maxStringLength), argument <= UInt64(remaining) else {
            throw .lengthExceeded(offset: headOffset)
        }
        return Int(argument)
    }

    mutating func item(depth: Int) throws(CBORError) -> CBORValue {
        let headOffset = offset
        let initial = try byte()
        let major = initial >> 5
        let info = initial & 0x1f
        if major == 7 { return try simple(info, headOffset: headOffset) }
        let argument = try argument(info, headOffset: headOffset)
        switch major {
        case 0:
            return .unsigned(argument)
        case 1:
            return .negative(argument)
        case 2:
            let length = try stringLength(argument, headOffset: headOffset)
            let content = Array(bytes[position..<(position + length)])
            position += length
            return .bytes(content)
        case 3:
            let length = try stringLength(argument, headOffset: headOffset)
            let content = bytes[position..<(position + length)]
            guard let text = String(validating: content, as: UTF8.self) else {
                throw .invalidUTF8(offset: headOffset)
            }
            position += length
            return .text(text)
        case 4:
            guard depth < limits.maxDepth else { throw .depthExceeded(offset: headOffset) }
            // Each element takes at least one byte.
            guard argument <= UInt64(limits.maxCollectionCount), argument <= UInt64(remaining) else {
                throw .lengthExceeded(offset: headOffset)
            }
            var elements: [CBORValue] = []
            elements.reserveCapacity(Int(argument))
            for _ in 0..<Int(argument) { elements.append(try item(depth: depth + 1)) }
            return .array(elements)
        case 5:
            guard depth < limits.maxDepth else { throw .depthExceeded(offset: headOffset) }
            // Each entry takes at least two bytes.
            guard argument <= UInt64(limits.maxCollectionCount), argument <= UInt64(remaining / 2) else {
                throw .lengthExceeded(offset: headOffset)
            }
            return .map(try mapEntries(count: Int(argument), depth: depth))
        default:  // 6: a tag
            guard depth < limits.maxDepth else { throw .depthExceeded(offset: headOffset) }
            return .tagged(argument, try item(depth: depth + 1))
        }
    }

    mutating func mapEntries(count: Int, depth: Int) throws(CBORError) -> [CBORMapEntry] {
        var entries: [CBORMapEntry] = []
        entries.reserveCapacity(count)
        var seen: Set<CBORValue> = []
        let useSet = count > 16  // small maps (all of App Attest's) compare linearly, no hashing
        for _ in 0..<count {
            let keyOffset = offset
            let key = try item(depth: depth + 1)
            if useSet {
                guard seen.insert(key).inserted else { throw .duplicateMapKey(offset: keyOffset) }
            } else {
                for entry in entries where entry.key == key { throw .duplicateMapKey(offset: keyOffset) }
            }
            let value = try item(depth: depth + 1)
            entries.append(CBORMapEntry(key: key, value: value))
        }
        return entries
    }

    /// Major type 7 (RFC 8949 §3.3).
    mutating func simple(_ info: UInt8, headOffset: Int) throws(CBORError) -> CBORValue {
        switch info {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 25, 26, 27: throw .unsupported(offset: headOffset, what: "floating-point number")
        case 28, 29, 30: throw .reservedAdditionalInfo(offset: headOffset)
        case 31: throw .indefiniteLength(offset: headOffset)  // a "break" outside an indefinite item
        default: throw .unsupported(offset: headOffset, what: "simple value")
        }
    }
}
