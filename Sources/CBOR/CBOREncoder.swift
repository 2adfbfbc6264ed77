/// A small CBOR encoder (RFC 8949 §4.2.1 preferred serialization: shortest heads, definite lengths).
///
/// Maps are written in the order given, so a caller controls the exact bytes (tests build
/// attestation objects key by key). It does not check for duplicate keys: tests use it to make
/// invalid input on purpose.
public enum CBOREncoder {
    /// The encoding of `value`.
    public static func encode(_ value: CBORValue) -> [UInt8] {
        var output: [UInt8] = []
        append(value, to: &output)
        return output
    }

    /// Appends the encoding of `value` to `output`.
    public static func append(_ value: CBORValue, to output: inout [UInt8]) {
        switch value {
        case .unsigned(let number):
            appendHead(major: 0, argument: number, to: &output)
        case .negative(let number):
            appendHead(major: 1, argument: number, to: &output)
        case .bytes(let bytes):
            appendHead(major: 2, argument: UInt64(bytes.count), to: &output)
            output.append(contentsOf: bytes)
        case .text(let text):
            let utf8 = Array(text.utf8)
            appendHead(major: 3, argument: UInt64(utf8.count), to: &output)
            output.append(contentsOf: utf8)
        case .array(let elements):
            appendHead(major: 4, argument: UInt64(elements.count), to: &output)
            for element in elements { append(element, to: &output) }
        case .map(let entries):
            appendHead(major: 5, argument: UInt64(entries.count), to: &output)
            for entry in entries {
                append(entry.key, to: &output)
                append(entry.value, to: &output)
            }
        case .tagged(let tag, let content):
            appendHead(major: 6, argument: tag, to: &output)
            append(content, to: &output)
        case .bool(let flag):
            output.append(flag ? 0xf5 : 0xf4)
        case .null:
            output.append(0xf6)
        case .undefined:
            output.append(0xf7)
        }
    }

    /// Appends a head: major type in the top three bits, the argument in the shortest form.
    public static func appendHead(major: UInt8, argument: UInt64, to output: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24:
            output.append(type | UInt8(argument))
        case 24...0xff:
            output.append(type | 24)
            output.append(UInt8(argument))
        case 0x100...0xffff:
            output.append(type | 25)
            output.append(contentsOf: bigEndian(argument, width: 2))
        case 0x1_0000...0xffff_ffff:
            output.append(type | 26)
            output.append(contentsOf: bigEndian(argument, width: 4))
        default:
            output.append(type | 27)
            output.append(contentsOf: bigEndian(argument, width: 8))
        }
    }

    private static func bigEndian(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - $0))) }
    }
}
