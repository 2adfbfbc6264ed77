/// One decoded CBOR data item (RFC 8949 §3).
///
/// Only what a strict decoder for App Attest and WebAuthn needs: integers, byte and text strings,
/// arrays, maps (in wire order), tags, and the simple values `false`, `true`, `null`, `undefined`.
/// Floating-point numbers are not represented: the decoder refuses them (`CBORError.unsupported`).
public indirect enum CBORValue: Sendable, Hashable {
    /// Major type 0: an unsigned integer `n`.
    case unsigned(UInt64)
    /// Major type 1: the negative integer `-1 - n` (RFC 8949 §3.1); `.negative(0)` is -1.
    case negative(UInt64)
    /// Major type 2: a byte string.
    case bytes([UInt8])
    /// Major type 3: a text string (valid UTF-8, checked by the decoder).
    case text(String)
    /// Major type 4: an array.
    case array([CBORValue])
    /// Major type 5: a map, entries in the order they were encoded (keys are unique).
    case map([CBORMapEntry])
    /// Major type 6: a tagged item (tag number, content).
    case tagged(UInt64, CBORValue)
    /// Major type 7, simple values 20 and 21.
    case bool(Bool)
    /// Major type 7, simple value 22.
    case null
    /// Major type 7, simple value 23.
    case undefined
}

/// One key/value pair of a CBOR map.
public struct CBORMapEntry: Sendable, Hashable {
    /// The entry's key (unique within its map once decoded).
    public let key: CBORValue
    /// The entry's value.
    public let value: CBORValue

    /// An entry for building maps to encode.
    public init(key: CBORValue, value: CBORValue) {
        self.key = key
        self.value = value
    }
}

extension CBORValue {
    /// The value stored under `key` if this is a map with a text key equal to `key`, else nil.
    public subscript(textKey key: String) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        for entry in entries where entry.key == .text(key) { return entry.value }
        return nil
    }

    /// The value stored under the integer `key` (a COSE label, RFC 9052 §7) if this is a map, else nil.
    public subscript(intKey key: Int64) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        let wanted: CBORValue = key >= 0 ? .unsigned(UInt64(key)) : .negative(UInt64(-1 - key))
        for entry in entries where entry.key == wanted { return entry.value }
        return nil
    }

    /// The bytes of a byte string, else nil.
    public var bytesValue: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    /// The string of a text string, else nil.
    public var textValue: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    /// The elements of an array, else nil.
    public var arrayValue: [CBORValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The entries of a map, else nil.
    public var mapEntries: [CBORMapEntry]? {
        if case .map(let entries) = self { return entries }
        return nil
    }

    /// The value of an unsigned integer, else nil.
    public var unsignedValue: UInt64? {
        if case .unsigned(let value) = self { return value }
        return nil
    }
}
