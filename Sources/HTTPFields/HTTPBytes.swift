/// Byte-level RFC 9110 rules for field names, values, methods and tokens, shared by the server,
/// the upstream client and the provider registry: one token table, one case fold, and no
/// `lowercased()` allocation on the request path. Everything is `@inlinable`: these run per byte
/// of every header, and a call across the module boundary each time would cost more than the work.
package enum HTTPBytes {
    /// ASCII-lowercases one byte (A–Z → a–z); every other byte passes through.
    @inlinable @inline(__always)
    package static func lower(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    // MARK: tokens (RFC 9110 §5.6.2)

    /// True when `byte` is a `tchar` (RFC 9110 §5.6.2): the characters of a token (field names,
    /// methods): `!#$%&'*+-.^_`|~`, a digit or a letter. Bytes ≥ 128 never are.
    @inlinable @inline(__always)
    package static func isTokenByte(_ byte: UInt8) -> Bool {
        // Bit b of `low` (b < 64) or of `high` (b − 64) is set when byte b is a tchar.
        let low: UInt64 = 0x03FF_6CFA_0000_0000, high: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        let allowed = byte < 64 ? (low >> UInt64(byte)) & 1 : byte < 128 ? (high >> UInt64(byte - 64)) & 1 : 0
        return allowed != 0
    }

    /// True when `text` is a non-empty token.
    @inlinable
    package static func isToken(_ text: String) -> Bool {
        // A native string's bytes are read in place; the view's iterator costs several times more.
        if let verdict = text.utf8.withContiguousStorageIfAvailable({ isToken(UnsafeRawBufferPointer($0)) }) { return verdict }
        return !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    /// True when the bytes are a non-empty token (RFC 9110 §5.6.2): whitespace before the colon
    /// (`Content-Length : 5`) makes a name that is not one.
    @inlinable
    package static func isToken(_ bytes: UnsafeRawBufferPointer) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy(isTokenByte)
    }

    // MARK: field values (RFC 9110 §5.5)

    /// True when no byte is a control character other than HTAB (RFC 9110 §5.5: CR, LF and NUL
    /// must be refused; other CTLs have no business in a field value either). obs-text passes.
    @inlinable
    package static func isFieldValue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for byte in bytes where (byte < 0x20 && byte != 0x09) || byte == 0x7F {
            return false
        }
        return true
    }

    // MARK: case-insensitive names (RFC 9110 §5.1)

    /// True when `a` and `b` are equal ignoring ASCII case.
    @inlinable
    package static func caseInsensitiveEquals(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in caseInsensitiveEquals(UnsafeRawBufferPointer(x), y) }
        }
    }

    /// True when the bytes equal `name` ignoring ASCII case.
    @inlinable
    package static func caseInsensitiveEquals(_ bytes: UnsafeRawBufferPointer, _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == name.count else { return false }
        for index in 0..<bytes.count where lower(bytes[index]) != lower(name[index]) {
            return false
        }
        return true
    }

    /// `text` equals `lowercased` ignoring ASCII case; `lowercased` must already be lowercase.
    @inlinable
    package static func equalsIgnoringCase(_ text: String, _ lowercased: String) -> Bool {
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

    /// `name` equals the static `lowercased` ignoring ASCII case; `lowercased` must already be
    /// lowercase. No allocation (the upstream response head is parsed with it).
    @inlinable
    package static func equalsIgnoringCase(_ name: String, staticLowercased lowercased: StaticString) -> Bool {
        guard name.utf8.count == lowercased.utf8CodeUnitCount else { return false }
        // A literal of two or more characters is stored as UTF-8 and read in place, without a closure.
        guard lowercased.hasPointerRepresentation else {
            return lowercased.withUTF8Buffer { expected in name.utf8.elementsEqual(expected) { lower($0) == $1 } }
        }
        let expected = lowercased.utf8Start
        if let verdict = name.utf8.withContiguousStorageIfAvailable({ bytes in
            for index in 0..<bytes.count where lower(bytes[index]) != expected[index] { return false }
            return true
        }) {
            return verdict
        }
        var index = 0
        for byte in name.utf8 {
            if lower(byte) != expected[index] { return false }
            index += 1
        }
        return true
    }

    /// The bytes equal the static `lowercased` ignoring ASCII case; `lowercased` must already be lowercase.
    @inlinable
    package static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, staticLowercased lowercased: StaticString) -> Bool {
        guard bytes.count == lowercased.utf8CodeUnitCount else { return false }
        return lowercased.withUTF8Buffer { expected in
            for index in 0..<bytes.count where lower(bytes[index]) != expected[index] { return false }
            return true
        }
    }

    /// `text` starts with `lowercasedPrefix` ignoring ASCII case.
    @inlinable
    package static func hasPrefixIgnoringCase(_ text: String, _ lowercasedPrefix: String) -> Bool {
        var left = text.utf8.makeIterator()
        for byte in lowercasedPrefix.utf8 {
            guard let a = left.next(), lower(a) == byte else { return false }
        }
        return true
    }

    /// `text` lowercased (ASCII letters only).
    package static func lowercased(_ text: String) -> String {
        String(decoding: text.utf8.map(lower), as: UTF8.self)
    }

    /// `haystack` contains `needle` as a byte sequence, ignoring ASCII case (`needle` non-empty and
    /// already lowercase).
    @inlinable
    package static func containsIgnoringCase(_ haystack: String, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.utf8.count >= needle.count else { return false }
        if let found = haystack.utf8.withContiguousStorageIfAvailable({ search($0, needle) }) { return found }
        return Array(haystack.utf8).withUnsafeBufferPointer { search($0, needle) }
    }

    /// Whether the bytes contain `needle` (already lowercased), ASCII letters compared in any case.
    package static func containsIgnoringCase(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return search(haystack, needle)
    }

    /// Whether `haystack` contains `needle` (already lowercased), ASCII letters compared in any case.
    package static func containsIgnoringCase(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return haystack.withUnsafeBufferPointer { search($0, needle) }
    }

    @usableFromInline static func search(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
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
}
