#if canImport(Glibc)
import Glibc
#endif

/// Checks that the header fields libmicrohttpd reported are exactly the lines of the head it read,
/// to refuse what its parser hides (RFC 9112 §5: a field line is `field-name ":" OWS field-value
/// OWS`; §5.2: obs-fold is refused; RFC 9110 §5.5: no NUL).
///
/// libmicrohttpd 0.9.75 has no setting for these (its only strictness option, `MHD_OPTION_STRICT_FOR_CLIENT`,
/// governs `Host` and spaces in the target) and parses the head in place in its read buffer: each
/// CR and LF becomes a NUL, so does the colon ending each name, and the fields point into that
/// buffer. What it does with the hostile cases:
/// - obs-fold: the continuation is appended to the previous field's *name* (`Content-Lengt: 5` +
///   ` h` → `Content-Length: 5`), in a copy outside the buffer; the name no longer sits where its line starts;
/// - a NUL in a value ends the value there; the rest of the line is left unreported;
/// - a line that starts with a NUL, or with a colon (an empty name), is taken as the blank line that
///   ends the head: the lines after it would be read as the next request.
/// So the head is exactly its fields when, from the end of the request line to the end of the head,
/// every line is a reported field at its place — name, the colon's NUL, blanks, value — followed by
/// one or two NULs (LF or CRLF), and the head ends with two to four (the last line's end and the
/// blank line's). Any other byte there is a line the fields do not account for.
enum HeadLayout {
    /// Where one reported field lies: libmicrohttpd's pointers and lengths.
    struct FieldSpan {
        var name: UnsafeRawPointer?
        var nameCount: Int
        var value: UnsafeRawPointer?
        var valueCount: Int
    }

    /// Why the head is refused, or nil when every byte is accounted for.
    /// - Parameters:
    ///   - method: libmicrohttpd's method string: the first byte of the head.
    ///   - version: its version string, in place at the end of the request line.
    ///   - headSize: bytes from the method to the end of the blank line (`MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE`).
    ///   - fields: the header fields in arrival order.
    /// Without a method, a version or a size the head cannot be checked and nil is returned.
    static func check(method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, headSize: Int, fields: [FieldSpan]) -> FramingError? {
        guard let method, let version, headSize > 0 else { return nil }
        let start = UInt(bitPattern: method), end = start + UInt(headSize)
        var position = UInt(bitPattern: version) + UInt(strlen(version))
        guard start < position, position <= end else { return .invalidFieldName }
        /// The byte at `address`, which the caller has checked lies in `start..<end`.
        func byte(_ address: UInt) -> UInt8 {
            UnsafeRawPointer(bitPattern: address)?.load(as: UInt8.self) ?? 0
        }
        /// Judges the bytes between two lines' contents: `allowed` NULs and nothing else.
        func lineEnd(from: UInt, to: UInt, allowed: ClosedRange<UInt>) -> FramingError? {
            var address = from
            while address < to, byte(address) == 0 { address += 1 }
            let nulls = address - from
            // More NULs than line ends: the value before them ended in a NUL.
            if address == to { return allowed.contains(nulls) ? nil : nulls > allowed.upperBound ? .invalidFieldValue : .invalidFieldName }
            // Bytes after the NULs: the rest of a line whose value stopped at a NUL (one NUL, not a
            // line end), or a line read as the end of the head (an empty name, a leading NUL).
            return nulls == 1 ? .invalidFieldValue : .invalidFieldName
        }
        for field in fields {
            guard let namePointer = field.name, let valuePointer = field.value else { return .invalidFieldName }
            let name = UInt(bitPattern: namePointer), value = UInt(bitPattern: valuePointer)
            // A name outside the head, or before the end of the previous line, is a copy: the fold's.
            guard name > position, name < end else { return .obsoleteLineFolding }
            if let failure = lineEnd(from: position, to: name, allowed: 1...2) { return failure }
            position = name + UInt(field.nameCount)
            guard position < end, byte(position) == 0 else { return .invalidFieldName }
            position += 1
            guard value >= position, value <= end, UInt(field.valueCount) <= end - value else { return .invalidFieldValue }
            while position < value {
                let blank = byte(position)
                guard blank == UInt8(ascii: " ") || blank == UInt8(ascii: "\t") else { return .invalidFieldValue }
                position += 1
            }
            position = value + UInt(field.valueCount)
        }
        return lineEnd(from: position, to: end, allowed: 2...4)
    }
}
