/// Why a byte sequence is not acceptable CBOR. Never carries the input bytes themselves.
public enum CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input ends inside an item (a head, a length, or content).
    case truncated(offset: Int)
    /// Bytes follow the top-level item (RFC 8949 §5.1 "well-formed" forbids them for one item).
    case trailingBytes(offset: Int)
    /// An indefinite-length string, array or map, or a lone "break" byte (RFC 8949 §3.2): refused.
    case indefiniteLength(offset: Int)
    /// Additional information 28–30 (reserved, RFC 8949 §3).
    case reservedAdditionalInfo(offset: Int)
    /// A map holds the same key twice (RFC 8949 §5.6: such a map is invalid).
    case duplicateMapKey(offset: Int)
    /// Arrays, maps and tags nest deeper than `CBORDecoder.Limits.maxDepth`.
    case depthExceeded(offset: Int)
    /// A declared length or count is larger than the bytes that remain, or than a limit.
    case lengthExceeded(offset: Int)
    /// A text string is not valid UTF-8 (RFC 8949 §3.1, major type 3).
    case invalidUTF8(offset: Int)
    /// A well-formed item this decoder deliberately does not support (floats, other simple values).
    case unsupported(offset: Int, what: String)

    /// A stable slug for logs and metrics.
    public var reason: String {
        switch self {
        case .truncated: return "truncated"
        case .trailingBytes: return "trailing_bytes"
        case .indefiniteLength: return "indefinite_length"
        case .reservedAdditionalInfo: return "reserved_additional_info"
        case .duplicateMapKey: return "duplicate_map_key"
        case .depthExceeded: return "depth_exceeded"
        case .lengthExceeded: return "length_exceeded"
        case .invalidUTF8: return "invalid_utf8"
        case .unsupported: return "unsupported"
        }
    }

    /// The byte offset (from the start of the decoded input) where the problem was found.
    public var offset: Int {
        switch self {
        case .truncated(let offset), .trailingBytes(let offset), .indefiniteLength(let offset),
            .reservedAdditionalInfo(let offset), .duplicateMapKey(let offset), .depthExceeded(let offset),
            .lengthExceeded(let offset), .invalidUTF8(let offset), .unsupported(let offset, _):
            return offset
        }
    }

    /// The reason and offset, e.g. `CBOR duplicate_map_key at byte 4`.
    public var description: String {
        if case .unsupported(_, let what) = self {
            return "CBOR \(reason) (\(what)) at byte \(offset)"
        }
        return "CBOR \(reason) at byte \(offset)"
    }
}
