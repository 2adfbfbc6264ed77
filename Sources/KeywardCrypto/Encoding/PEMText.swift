/// PEM text (RFC 7468 §2): a label, base64 in 64-character lines, and the end line.
enum PEMText {
    static func encode(label: String, der: [UInt8]) -> String {
        let body = Base64.encode(der)
        var text = "-----BEGIN \(label)-----\n"
        var line = Substring(body)
        while !line.isEmpty {
            text += line.prefix(64)
            text += "\n"
            line = line.dropFirst(64)
        }
        text += "-----END \(label)-----\n"
        return text
    }
}
