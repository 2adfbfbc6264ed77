/// A query parameter in PostgreSQL's binary wire format, with its type so every prepared statement
/// is typed by us rather than inferred (a NULL keeps its type too).
enum PGValue {
    case int64(Int64?)
    case bytes([UInt8])
    case text(String)
    case bool(Bool)

    /// The type OID (`pg_type.oid`): int8 20, bytea 17, text 25, bool 16.
    var oid: UInt32 {
        switch self {
        case .int64: 20
        case .bytes: 17
        case .text: 25
        case .bool: 16
        }
    }

    /// Binary send format, or nil for SQL NULL: int8 is 8 bytes big-endian; bytea and text are their
    /// bytes (text as UTF-8); bool is one byte 0/1.
    var binary: [UInt8]? {
        switch self {
        case .int64(let value?): withUnsafeBytes(of: value.bigEndian) { Array($0) }
        case .int64(nil): nil
        case .bytes(let bytes): bytes
        case .text(let text): Array(text.utf8)
        case .bool(let value): [value ? 1 : 0]
        }
    }
}
