/// Reads what CTOML emits: its JSON text (RFC 8259, the subset the emitter writes) into `TOMLValue`,
/// and its line map (`<line>\t<path>\n` records) into a dictionary.
///
/// A small strict reader rather than `JSONDecoder`: it keeps table order, keeps integers (no
/// fraction) apart from floats, and needs no Foundation.
struct CTOMLOutputReader {
    /// The JSON did not match what CTOML writes; a bug, reported as an internal error.
    struct Malformed: Error {}

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    /// Parses one JSON value filling the whole of `bytes`.
    /// - Throws: `Malformed` on any deviation, including trailing bytes or nesting deeper than 512.
    static func value(json bytes: [UInt8]) throws(Malformed) -> TOMLValue {
        var reader = CTOMLOutputReader(bytes: bytes)
        let value = try reader.readValue()
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw Malformed() }
        return value
    }

    /// Parses the line map into rendered key path → 1-based line. Malformed records are skipped.
    static func lines(lineMap bytes: [UInt8]) -> [String: Int] {
        var lines: [String: Int] = [:]
        for record in bytes.split(separator: 0x0A) {
            guard let tab = record.firstIndex(of: 0x09) else { continue }
            var line = 0
            for byte in record[record.startIndex..<tab] {
                guard byte >= 0x30, byte <= 0x39, line < 100_000_000 else { line = -1; break }
                line = line * 10 + Int(byte - 0x30)
            }
            guard line >= 0 else { continue }
            let path = String(decoding: record[(tab + 1)...], as: UTF8.self)
            lines[path] = line
        }
        return lines
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    private mutating func expect(_ byte: UInt8) throws(Malformed) {
        guard index < bytes.count, bytes[index] == byte else { throw Malformed() }
        index += 1
    }

    private mutating func readValue() throws(Malformed) -> TOMLValue {
        skipWhitespace()
        guard index < bytes.count else { throw Malformed() }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try readTable()
        case UInt8(ascii: "["): return try readArray()
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): try readLiteral("true"); return .boolean(true)
        case UInt8(ascii: "f"): try readLiteral("false"); return .boolean(false)
        default: return try readNumber()
        }
    }

    private mutating func readLiteral(_ literal: String) throws(Malformed) {
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw Malformed() }
            index += 1
        }
    }

    private mutating func enter() throws(Malformed) {
        depth += 1
        guard depth <= 512 else { throw Malformed() }
    }

    private mutating func readTable() throws(Malformed) -> TOMLValue {
        try enter()
        defer { depth -= 1 }
        try expect(UInt8(ascii: "{"))
        var entries: [TOMLEntry] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .table(entries)
        }
        while true {
            skipWhitespace()
            let key = try readString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            entries.append(TOMLEntry(key: key, value: try readValue()))
            skipWhitespace()
            guard index < bytes.count else { throw Malformed() }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            try expect(UInt8(ascii: "}"))
            return .table(entries)
        }
    }

    private mutating func readArray() throws(Malformed) -> TOMLValue {
        try enter()
        defer { depth -= 1 }
        try expect(UInt8(ascii: "["))
        var elements: [TOMLValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try readValue())
            skipWhitespace()
            guard index < bytes.count else { throw Malformed() }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            try expect(UInt8(ascii: "]"))
            return .array(elements)
        }
    }

    private mutating func readHex4() throws(Malformed) -> UInt32 {
        guard index + 4 <= bytes.count else { throw Malformed() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw Malformed()
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private mutating func readString() throws(Malformed) -> String {
        try expect(UInt8(ascii: "\""))
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush(_ run: inout [UInt8], into scalars: inout String.UnicodeScalarView) {
            if !run.isEmpty {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run.removeAll(keepingCapacity: true)
            }
        }
        while true {
            guard index < bytes.count else { throw Malformed() }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                flush(&run, into: &scalars)
                return String(scalars)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw Malformed() }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): run.append(0x22)
                case UInt8(ascii: "\\"): run.append(0x5C)
                case UInt8(ascii: "/"): run.append(0x2F)
                case UInt8(ascii: "b"): run.append(0x08)
                case UInt8(ascii: "f"): run.append(0x0C)
                case UInt8(ascii: "n"): run.append(0x0A)
                case UInt8(ascii: "r"): run.append(0x0D)
                case UInt8(ascii: "t"): run.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try readHex4()
                    if code >= 0xD800, code < 0xDC00 {
                        try expect(UInt8(ascii: "\\"))
                        try expect(UInt8(ascii: "u"))
                        let low = try readHex4()
                        guard low >= 0xDC00, low < 0xE000 else { throw Malformed() }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw Malformed() }
                    flush(&run, into: &scalars)
                    scalars.append(scalar)
                default: throw Malformed()
                }
            default:
                guard byte >= 0x20 else { throw Malformed() }
                run.append(byte)
            }
        }
    }

    private mutating func readNumber() throws(Malformed) -> TOMLValue {
        let start = index
        var isFloat = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                isFloat = true
            } else if !(byte >= 0x30 && byte <= 0x39) && byte != UInt8(ascii: "-") && byte != UInt8(ascii: "+") {
                break
            }
            index += 1
        }
        guard index > start else { throw Malformed() }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isFloat {
            guard let number = Double(text) else { throw Malformed() }
            return .float(number)
        }
        guard let number = Int64(text) else { throw Malformed() }
        return .integer(number)
    }
}
