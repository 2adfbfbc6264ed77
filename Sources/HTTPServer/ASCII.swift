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

    /// True when every byte is a `tchar` and there is at least one (RFC 9110 §5.6.2: field names are tokens).
    /// libmicrohttpd 0.9.75 keeps whitespace before the colon in the name (`Content-Length : 5`).
    static func isToken(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty else { return false }
        // Bit b of the pair is set when byte b is a tchar: !#$%&'*+-.^_`|~ DIGIT ALPHA.
        let low: UInt64 = 0x03FF_6CFA_0000_0000, high: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        for byte in bytes {
            let allowed = byte < 64 ? (low >> UInt64(byte)) & 1 : byte < 128 ? (high >> UInt64(byte - 64)) & 1 : 0
            if allowed == 0 { return false }
        }
        return true
    }

    /// True when no byte is a control character other than HTAB (RFC 9110 §5.5: CR, LF and NUL
    /// must be refused; other CTLs have no business in a field value either). obs-text passes.
    static func isFieldValue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for byte in bytes where (byte < 0x20 && byte != 0x09) || byte == 0x7F {
            return false
        }
        return true
    }
}
