/// Byte-level ASCII helpers for the hot path: header names are compared case-insensitively without
/// allocating a lowercased copy (RFC 9110 §5.1: field names are case-insensitive).
enum ASCII {
    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// `text` equals `lowercased` ignoring ASCII case; `lowercased` must already be lowercase.
    static func equalsIgnoringCase(_ text: String, _ lowercased: String) -> Bool {
        var left = text.utf8.makeIterator()
        var right = lowercased.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let a?, let b?): if lower(a) != b { return false }
            default: return false
            }
        }
    }

    /// `text` starts with `lowercasedPrefix` ignoring ASCII case.
    static func hasPrefixIgnoringCase(_ text: String, _ lowercasedPrefix: String) -> Bool {
        var left = text.utf8.makeIterator()
        for byte in lowercasedPrefix.utf8 {
            guard let a = left.next(), lower(a) == byte else { return false }
        }
        return true
    }

    /// `text` lowercased (ASCII letters only).
    static func lowercased(_ text: String) -> String {
        String(decoding: text.utf8.map(lower), as: UTF8.self)
    }

    /// `haystack` contains `needle` as a byte sequence, ignoring ASCII case (`needle` non-empty and
    /// already lowercase).
    static func containsIgnoringCase(_ haystack: String, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.utf8.count >= needle.count else { return false }
        if let found = haystack.utf8.withContiguousStorageIfAvailable({ search($0, needle) }) { return found }
        return Array(haystack.utf8).withUnsafeBufferPointer { search($0, needle) }
    }

    private static func search(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        needle.withUnsafeBufferPointer { needle in
            let first = needle[0]
            let last = haystack.count - needle.count
            var start = 0
            while start <= last {
                if lower(haystack[start]) == first {
                    var offset = 1
                    while offset < needle.count, lower(haystack[start + offset]) == needle[offset] { offset += 1 }
                    if offset == needle.count { return true }
                }
                start += 1
            }
            return false
        }
    }

    /// RFC 9110 §5.6.2 `tchar`: the characters of a token (field names, methods).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default: return false
        }
    }

    /// A non-empty RFC 9110 token.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }
}
