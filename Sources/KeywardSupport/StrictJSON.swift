/// One strict reading of a JSON object (RFC 8259), shared by every part of Keyward that reads JSON
/// a client sent: the session's JOSE header and claims, the handshake and admin bodies, and the
/// bodies an allow rule's `json` table checks.
///
/// Beyond RFC 8259's grammar it refuses what different parsers read differently, so no body means
/// one thing to Keyward and another to a client library, a provider or a log reader: a member
/// named twice at any depth (RFC 8259 §4 leaves the meaning open; RFC 7515 §4 and RFC 7519 §4
/// refuse it), a leading byte-order mark (RFC 8259 §8.1: must not be added), nesting deeper than
/// the caller's bound (the reader recurses once per level), and, where the caller asks, numbers
/// that are not plain integers (RFC 7519 §2 reads NumericDate as an integer here).
///
/// It answers the top-level members with the byte range of each value, and one level further for
/// values that are objects, so a caller can check a member and insert one without a second parse.
package enum StrictJSON {
    /// Why a text is not one strict JSON object.
    package enum Failure: Error, Equatable, Sendable {
        /// Well-formed JSON, but not an object at the top (an array, a string, a number…).
        case notAnObject
        /// Not JSON by RFC 8259, a leading byte-order mark, text after the object, or a number
        /// the caller's options refuse.
        case malformed
        /// A member name appears twice in one object, at any depth.
        case duplicateMember
        /// Nested deeper than `Options.maximumDepth`.
        case tooDeep
    }

    /// What the reader accepts beyond RFC 8259's grammar.
    package struct Options: Sendable {
        /// Objects and arrays nested deeper than this are refused; the top-level object is depth 1.
        package var maximumDepth: Int
        /// Only `-? (0 | [1-9][0-9]*)`: no fraction, no exponent.
        package var integersOnly: Bool

        package init(maximumDepth: Int, integersOnly: Bool) {
            self.maximumDepth = maximumDepth
            self.integersOnly = integersOnly
        }
    }

    /// The kind of one member's value.
    package enum Kind: Sendable, Equatable {
        case object, array, string, number, bool, null
    }

    /// One member of an object: its name, where its value lies, and its value when it is a scalar.
    package struct Member: Sendable {
        /// The member name, unescaped.
        package let name: String
        package let kind: Kind
        /// The byte range of the value in the text read, from its first byte to one past its last.
        package let valueRange: Range<Int>
        /// The value, unescaped, when `kind == .string`.
        package let string: String?
        /// The value when `kind == .number` and it is a plain integer that fits in `Int`.
        package let integer: Int?
        /// The value when `kind == .bool`.
        package let bool: Bool?
        /// When `kind == .object` at the top level: that object's members (one level only);
        /// the byte of its closing brace is `valueRange.upperBound - 1`.
        package let members: [Member]?
    }

    /// The top-level members of `bytes`, in order, when it is one object that keeps the rules
    /// above at every depth.
    /// - Throws: `Failure` naming the first rule broken.
    package static func object(_ bytes: [UInt8], options: Options) throws(Failure) -> [Member] {
        var reader = Reader(bytes: bytes, options: options)
        reader.skipWhitespace()
        guard reader.peek == UInt8(ascii: "{") else {
            // Tell a non-object JSON text from something that is not JSON at all.
            _ = try reader.value(depth: 1, collect: false)
            reader.skipWhitespace()
            throw reader.atEnd ? .notAnObject : .malformed
        }
        let members = try reader.object(depth: 1, collect: 2)
        reader.skipWhitespace()
        guard reader.atEnd else { throw .malformed }
        return members
    }

    /// The top-level member names of `bytes` when it is one object by the rules above; nil otherwise.
    package static func memberNames(_ bytes: [UInt8], options: Options) -> Set<String>? {
        var reader = Reader(bytes: bytes, options: options)
        reader.skipWhitespace()
        guard reader.peek == UInt8(ascii: "{"), let members = try? reader.object(depth: 1, collect: 1) else { return nil }
        reader.skipWhitespace()
        return reader.atEnd ? Set(members.map(\.name)) : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        let options: Options
        var index = 0
        /// The names of every object open now, innermost last, as ranges of `bytes`; a name that
        /// had escapes is kept unescaped in `escapedNames`, its range then `-1 - position`.
        /// One stack for the whole text, so an object costs no allocation of its own.
        var names: [Range<Int>] = []
        var escapedNames: [[UInt8]] = []

        init(bytes: [UInt8], options: Options) {
            self.bytes = bytes
            self.options = options
        }

        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        /// An object at `index` (on its `{`). With `collect` > 0 its members are answered (and, with
        /// 2, those of its object-valued members); with 0 only checked (names are still compared).
        mutating func object(depth: Int, collect: Int) throws(Failure) -> [Member] {
            guard depth <= options.maximumDepth else { throw .tooDeep }
            guard take(UInt8(ascii: "{")) else { throw .malformed }
            // Names compared one by one while the object is small, through a set beyond, so no
            // object costs quadratic time.
            let base = names.count
            defer { names.removeSubrange(base...) }
            var nameSet: Set<[UInt8]>?
            var members: [Member] = []
            if collect > 0 { members.reserveCapacity(16) }
            skipWhitespace()
            if take(UInt8(ascii: "}")) { return members }
            while true {
                skipWhitespace()
                guard let (range, escaped) = skipString() else { throw .malformed }
                var decodedName: String?
                var name = range
                if escaped || collect > 0 {
                    guard let text = decode(range, escaped: escaped) else { throw .malformed }
                    decodedName = text
                    if escaped {
                        escapedNames.append(Array(text.utf8))
                        name = (-escapedNames.count)..<(-escapedNames.count)
                    }
                }
                if nameSet != nil {
                    guard nameSet!.insert(nameBytes(name)).inserted else { throw .duplicateMember }
                } else {
                    for earlier in names[base...] where sameName(earlier, name) { throw .duplicateMember }
                    names.append(name)
                    if names.count - base == 16 { nameSet = Set(names[base...].map(nameBytes)) }
                }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { throw .malformed }
                skipWhitespace()
                let start = index
                let first = peek
                if collect > 0, let name = decodedName {
                    members.append(try member(name, depth: depth, collectChildren: collect > 1, start: start, first: first))
                } else {
                    _ = try value(depth: depth, collect: false)
                }
                skipWhitespace()
                if take(UInt8(ascii: "}")) { return members }
                guard take(UInt8(ascii: ",")) else { throw .malformed }
            }
        }

        /// The bytes of a name on the stack.
        func nameBytes(_ name: Range<Int>) -> [UInt8] {
            name.lowerBound < 0 ? escapedNames[-name.lowerBound - 1] : Array(bytes[name])
        }

        /// Whether two names on the stack are the same bytes.
        func sameName(_ left: Range<Int>, _ right: Range<Int>) -> Bool {
            if left.lowerBound < 0 || right.lowerBound < 0 { return nameBytes(left) == nameBytes(right) }
            guard left.count == right.count else { return false }
            var offset = 0
            while offset < left.count {
                if bytes[left.lowerBound + offset] != bytes[right.lowerBound + offset] { return false }
                offset += 1
            }
            return true
        }

        /// One member's value, read and described.
        mutating func member(_ name: String, depth: Int, collectChildren: Bool, start: Int, first: UInt8?) throws(Failure) -> Member {
            switch first {
            case UInt8(ascii: "{"):
                let children = try object(depth: depth + 1, collect: collectChildren ? 1 : 0)
                return Member(name: name, kind: .object, valueRange: start..<index, string: nil, integer: nil, bool: nil,
                              members: collectChildren ? children : nil)
            case UInt8(ascii: "\""):
                guard let (range, escaped) = skipString(), let text = decode(range, escaped: escaped) else { throw .malformed }
                return Member(name: name, kind: .string, valueRange: start..<index, string: text, integer: nil, bool: nil, members: nil)
            default:
                let kind = try value(depth: depth, collect: false)
                var integer: Int?
                if kind == .number { integer = Self.plainInteger(bytes[start..<index]) }
                let bool: Bool? = kind == .bool ? (first == UInt8(ascii: "t")) : nil
                return Member(name: name, kind: kind, valueRange: start..<index, string: nil, integer: integer, bool: bool, members: nil)
            }
        }

        /// The value of a plain integer's text, when it fits in `Int`.
        static func plainInteger(_ text: ArraySlice<UInt8>) -> Int? {
            var value = 0
            var digits = text[...]
            let negative = digits.first == UInt8(ascii: "-")
            if negative { digits = digits.dropFirst() }
            guard !digits.isEmpty else { return nil }
            for digit in digits {
                guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
                let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflowB) = times.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
                guard !overflowA, !overflowB else { return nil }
                value = sum
            }
            return negative ? -value : value
        }

        mutating func array(depth: Int) throws(Failure) {
            guard depth <= options.maximumDepth else { throw .tooDeep }
            guard take(UInt8(ascii: "[")) else { throw .malformed }
            skipWhitespace()
            if take(UInt8(ascii: "]")) { return }
            while true {
                _ = try value(depth: depth, collect: false)
                skipWhitespace()
                if take(UInt8(ascii: "]")) { return }
                guard take(UInt8(ascii: ",")) else { throw .malformed }
            }
        }

        /// Any value at `index`, checked; its kind.
        mutating func value(depth: Int, collect: Bool) throws(Failure) -> Kind {
            skipWhitespace()
            switch peek {
            case UInt8(ascii: "{"):
                _ = try object(depth: depth + 1, collect: 0)
                return .object
            case UInt8(ascii: "["):
                try array(depth: depth + 1)
                return .array
            case UInt8(ascii: "\""):
                guard skipString() != nil else { throw .malformed }
                return .string
            case UInt8(ascii: "t"):
                guard literal("true") else { throw .malformed }
                return .bool
            case UInt8(ascii: "f"):
                guard literal("false") else { throw .malformed }
                return .bool
            case UInt8(ascii: "n"):
                guard literal("null") else { throw .malformed }
                return .null
            default:
                guard number() else { throw .malformed }
                return .number
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func digits() -> Int {
            var count = 0
            while let digit = peek, digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") {
                index += 1
                count += 1
            }
            return count
        }

        /// `-? (0 | [1-9][0-9]*)`, then, unless `integersOnly`, RFC 8259's `frac` and `exp`;
        /// nothing after it that would continue a number.
        mutating func number() -> Bool {
            _ = take(UInt8(ascii: "-"))
            guard let first = peek, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { return false }
            index += 1
            if first != UInt8(ascii: "0") { _ = digits() }
            if !options.integersOnly {
                if take(UInt8(ascii: ".")) { guard digits() > 0 else { return false } }
                if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                    if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                    guard digits() > 0 else { return false }
                }
            }
            guard let next = peek else { return true }
            return next != UInt8(ascii: ".") && next != UInt8(ascii: "e") && next != UInt8(ascii: "E")
                && !(next >= UInt8(ascii: "0") && next <= UInt8(ascii: "9"))
        }

        /// A string at `index` (on its quote), checked by RFC 8259 §7 without building it (no raw
        /// control characters, only the listed escapes, `\u` surrogates paired, valid UTF-8 by
        /// RFC 3629): the range of its content, between the quotes, and whether it has escapes.
        mutating func skipString() -> (Range<Int>, Bool)? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            var escaped = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    defer { index += 1 }
                    return (start..<index, escaped)
                }
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    index += 1
                    guard let next = peek else { return nil }
                    index += 1
                    switch next {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                         UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        guard unicodeEscape() != nil else { return nil }
                    default:
                        return nil
                    }
                } else if byte < 0x20 {
                    return nil
                } else if byte < 0x80 {
                    index += 1
                } else {
                    guard utf8Sequence() else { return nil }
                }
            }
            return nil
        }

        /// One multi-byte UTF-8 sequence at `index` (RFC 3629 §4: no overlong forms, no
        /// surrogates, nothing past U+10FFFF), stepped over.
        mutating func utf8Sequence() -> Bool {
            let lead = bytes[index]
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            let continuations: Int
            switch lead {
            case 0xC2...0xDF: continuations = 1
            case 0xE0: continuations = 2; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: continuations = 2
            case 0xED: continuations = 2; high = 0x9F
            case 0xF0: continuations = 3; low = 0x90
            case 0xF1...0xF3: continuations = 3
            case 0xF4: continuations = 3; high = 0x8F
            default: return false
            }
            guard index + continuations < bytes.count else { return false }
            let second = bytes[index + 1]
            guard second >= low, second <= high else { return false }
            for offset in stride(from: 2, through: continuations, by: 1) where bytes[index + offset] & 0xC0 != 0x80 { return false }
            index += continuations + 1
            return true
        }

        /// The text of a string whose content `skipString` found at `range`.
        func decode(_ range: Range<Int>, escaped: Bool) -> String? {
            guard escaped else { return String(decoding: bytes[range], as: UTF8.self) }
            var copy = Reader(bytes: bytes, options: options)
            copy.index = range.lowerBound - 1
            return copy.string()
        }

        /// A string at `index` (on its quote), unescaped; nil when malformed (RFC 8259 §7: no raw
        /// control characters, only the listed escapes, `\u` surrogates paired, valid UTF-8).
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() -> Bool {
                guard !raw.isEmpty else { return true }
                guard let text = String(validating: raw, as: UTF8.self) else { return false }
                scalars.append(contentsOf: text.unicodeScalars)
                raw.removeAll(keepingCapacity: true)
                return true
            }
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return flush() ? String(scalars) : nil
                case UInt8(ascii: "\\"):
                    guard flush(), let escaped = peek else { return nil }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(Unicode.Scalar(escaped))
                    case UInt8(ascii: "b"): scalars.append("\u{8}")
                    case UInt8(ascii: "f"): scalars.append("\u{C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        guard let scalar = unicodeEscape() else { return nil }
                        scalars.append(scalar)
                    default: return nil
                    }
                case 0x00..<0x20:
                    return nil
                default:
                    raw.append(byte)
                }
            }
            return nil
        }

        /// The four hex digits after `\u` (and a low surrogate's `\uXXXX` after a high one).
        mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let high = hex4() else { return nil }
            if (0xD800..<0xDC00).contains(high) {
                guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            }
            return Unicode.Scalar(high)
        }

        mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }
    }
}
