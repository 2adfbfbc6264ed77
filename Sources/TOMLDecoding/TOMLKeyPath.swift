/// A location inside a TOML document: table keys and array indices from the root.
///
/// Rendered the way CTOML renders the line map and the way people write TOML: bare keys as is,
/// other keys quoted with JSON escapes, indices in brackets — `openai.allow[2].path`,
/// `openai.headers."x.y"`.
public struct TOMLKeyPath: Sendable, Hashable, CustomStringConvertible {
    /// One step: a key of a table or an index into an array.
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    public var components: [Component]

    public init(_ components: [Component] = []) { self.components = components }

    /// The root of the document.
    public static let root = TOMLKeyPath()

    /// This path extended by the table key `key`.
    public func appending(_ key: String) -> TOMLKeyPath {
        TOMLKeyPath(components + [.key(key)])
    }

    /// This path extended by the array index `index`.
    public func appending(index: Int) -> TOMLKeyPath {
        TOMLKeyPath(components + [.index(index)])
    }

    /// The path one step up, or nil at the root.
    public var parent: TOMLKeyPath? {
        components.isEmpty ? nil : TOMLKeyPath(Array(components.dropLast()))
    }

    public var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key):
                if !text.isEmpty { text += "." }
                text += TOMLKeyPath.render(key: key)
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }

    /// A key as CTOML renders it: bare when it uses only `A-Z a-z 0-9 _ -` (TOML 1.0 bare keys),
    /// otherwise a JSON string literal (RFC 8259 §7 escapes).
    static func render(key: String) -> String {
        let bare = !key.isEmpty && key.utf8.allSatisfy { byte in
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x5F || byte == 0x2D
        }
        if bare { return key }
        let hex: [Character] = Array("0123456789abcdef")
        var text = "\""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    text += "\\u00"
                    text.append(hex[Int(scalar.value >> 4)])
                    text.append(hex[Int(scalar.value & 0xF)])
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        return text + "\""
    }
}
