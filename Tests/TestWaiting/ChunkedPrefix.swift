import Foundation

/// A chunked body (RFC 9112 §7.1) decoded up to where `raw` stops, for tests that read a body
/// the server cut: the data of the chunks received and whether the last chunk (size 0) came.
/// - Throws: `ChunkedPrefixError` on a size line that is not hexadecimal.
public func decodeChunkedPrefix(_ raw: [UInt8]) throws -> (data: [UInt8], ended: Bool) {
    var data: [UInt8] = []
    var index = 0
    while let lineEnd = raw[index...].firstIndex(of: 0x0A) {
        let sizeText = String(decoding: raw[index..<lineEnd], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) else {
            throw ChunkedPrefixError(sizeLine: sizeText)
        }
        if size == 0 { return (data, true) }
        let start = lineEnd + 1
        let end = min(start + size, raw.count)
        data += raw[start..<end]
        guard end + 2 <= raw.count else { return (data, false) }
        index = end + 2
    }
    return (data, false)
}

/// A chunk size line that is not hexadecimal.
public struct ChunkedPrefixError: Error {
    public let sizeLine: String
}
