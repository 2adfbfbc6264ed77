/// Byte-level ASCII helpers for header names: no `lowercased()` allocations on the request path.
enum ASCII {
    /// ASCII-lowercases one byte; other bytes pass through.
    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// True when `a` and `b` are equal ignoring ASCII case (RFC 9110 §5.1: field names are case-insensitive).
    static func caseInsensitiveEquals(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in caseInsensitiveEquals(UnsafeRawBufferPointer(x), y) }
        }
    }

    /// True when the bytes equal `lowercaseName` ignoring ASCII case; `lowercaseName` must be lowercase.
    static func caseInsensitiveEquals(_ bytes: UnsafeRawBufferPointer, _ lowercaseName: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == lowercaseName.count else { return false }
        for index in 0..<bytes.count where lower(bytes[index]) != lower(lowercaseName[index]) {
            return false
        }
        return true
    }
}
