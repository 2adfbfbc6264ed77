import HTTPFields

/// Decodes a chunked request body (RFC 9112 §7.1) as its bytes arrive, without copying the data:
/// each call hands back where the chunk data lies in the bytes it was given.
///
/// Strict: chunk sizes are 1*HEXDIG whose value is below 16¹⁵ (15 significant digits, so a size
/// fits an `Int`; leading zeros are digits like any other, bounded by the line limit), every line ends
/// with CRLF, chunk extensions (`;name=value`) are skipped but must be visible bytes and at most
/// ``maxLineBytes`` with the size, the data of each chunk is followed by CRLF. Trailer fields are
/// read and dropped (Keyward forwards none, RFC 9110 §6.5.1 lets a recipient discard them): each
/// must be a field line `token ":" value`, and all of them together at most ``maxTrailerBytes``.
/// How much body is allowed is the caller's to count from the data it is handed.
public struct ChunkedBodyDecoder: Sendable {
    /// What one call found in its input.
    public enum Step: Sendable, Equatable {
        /// Chunk data at these offsets of the input; call again with the input after `consumed`.
        case data(Range<Int>, consumed: Int)
        /// Every byte of the input was read; call again with more.
        case needMore
        /// The body ended after `consumed` bytes of the input: the rest is the next request.
        case end(consumed: Int)
        /// The body is malformed; the connection answers and closes.
        case refused(ChunkedBodyRefusal)
    }

    /// Bytes allowed in one size line (size, extensions and CRLF).
    public let maxLineBytes: Int
    /// Bytes allowed for the whole trailer section, line ends included.
    public let maxTrailerBytes: Int

    private enum State: Sendable, Equatable {
        /// Reading the size's hex digits; `digits` so far.
        case size(digits: Int)
        /// After the size: optional whitespace and extensions, until CR.
        case extensions
        /// The CR ending a size line was read; LF must follow.
        case sizeLineFeed
        case data
        /// After the data: CR then LF.
        case dataCarriageReturn
        case dataLineFeed
        /// At the start of a trailer line (or of the blank line ending the body).
        case trailerStart
        /// In a trailer field's name; `length` bytes so far.
        case trailerName(length: Int)
        case trailerValue
        /// A CR was read ending a trailer line; `blank` when the line was empty (the end).
        case trailerLineFeed(blank: Bool)
        case done
    }

    private var state: State = .size(digits: 0)
    private var chunkSize = 0
    private var remaining = 0
    private var lineBytes = 0
    private var trailerBytes = 0
    private var finished: Step?

    /// - Parameters:
    ///   - maxLineBytes: bytes allowed in one size line (size, extensions and CRLF).
    ///   - maxTrailerBytes: bytes allowed for the whole trailer section, line ends included.
    public init(maxLineBytes: Int = 4096, maxTrailerBytes: Int = 8192) {
        self.maxLineBytes = maxLineBytes
        self.maxTrailerBytes = maxTrailerBytes
    }

    /// True once the last chunk and the trailer section are read.
    public var isComplete: Bool { state == .done }

    /// Reads from the start of `input` (the bytes after those earlier calls consumed).
    public mutating func decode(_ input: UnsafeRawBufferPointer) -> Step {
        if let finished { return finished }
        let step = advance(input)
        switch step {
        case .refused, .end: finished = step
        default: break
        }
        return step
    }

    private mutating func advance(_ input: UnsafeRawBufferPointer) -> Step {
        var index = 0
        while index < input.count {
            if state == .data {
                let take = min(remaining, input.count - index)
                remaining -= take
                if remaining == 0 { state = .dataCarriageReturn }
                return .data(index..<(index + take), consumed: index + take)
            }
            let byte = input[index]
            index += 1
            if let refusal = read(byte) { return .refused(refusal) }
            if state == .done { return .end(consumed: index) }
        }
        return .needMore
    }

    /// One byte outside chunk data.
    private mutating func read(_ byte: UInt8) -> ChunkedBodyRefusal? {
        switch state {
        case .size(let digits):
            lineBytes += 1
            if lineBytes > maxLineBytes { return .lineTooLarge }
            if let value = Self.hexValue(byte) {
                // The value, not the digit count, is bounded: `000…0010` is 16 (RFC 9112 §7.1).
                guard chunkSize >> 56 == 0 else { return .chunkSizeTooLarge }
                chunkSize = chunkSize << 4 | value
                state = .size(digits: digits + 1)
            } else {
                guard digits > 0 else { return .malformed }
                if byte == UInt8(ascii: "\r") {
                    state = .sizeLineFeed
                } else if byte == UInt8(ascii: ";") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                    // RFC 9112 §7.1.1: BWS then `;` extensions.
                    state = .extensions
                } else {
                    return .malformed
                }
            }
        case .extensions:
            lineBytes += 1
            if lineBytes > maxLineBytes { return .lineTooLarge }
            if byte == UInt8(ascii: "\r") {
                state = .sizeLineFeed
            } else if byte < 0x20 && byte != 0x09 || byte == 0x7F {
                return .malformed
            }
        case .sizeLineFeed:
            guard byte == UInt8(ascii: "\n") else { return .malformed }
            lineBytes = 0
            if chunkSize == 0 {
                state = .trailerStart
            } else {
                remaining = chunkSize
                chunkSize = 0
                state = .data
            }
        case .data:
            // Chunk data is taken whole by `advance`, never byte by byte.
            return .malformed
        case .dataCarriageReturn:
            guard byte == UInt8(ascii: "\r") else { return .malformed }
            state = .dataLineFeed
        case .dataLineFeed:
            guard byte == UInt8(ascii: "\n") else { return .malformed }
            state = .size(digits: 0)
        case .trailerStart:
            if let refusal = countTrailerByte() { return refusal }
            if byte == UInt8(ascii: "\r") {
                state = .trailerLineFeed(blank: true)
            } else if byte == UInt8(ascii: "\n") {
                return .malformed
            } else if HTTPBytes.isTokenByte(byte) {
                state = .trailerName(length: 1)
            } else {
                return .malformedTrailer
            }
        case .trailerName(let length):
            if let refusal = countTrailerByte() { return refusal }
            if byte == UInt8(ascii: ":") {
                state = .trailerValue
            } else if HTTPBytes.isTokenByte(byte) {
                state = .trailerName(length: length + 1)
            } else {
                return .malformedTrailer
            }
        case .trailerValue:
            if let refusal = countTrailerByte() { return refusal }
            if byte == UInt8(ascii: "\r") {
                state = .trailerLineFeed(blank: false)
            } else if byte < 0x20 && byte != 0x09 || byte == 0x7F {
                return .malformedTrailer
            }
        case .trailerLineFeed(let blank):
            if !blank, let refusal = countTrailerByte() { return refusal }
            guard byte == UInt8(ascii: "\n") else { return blank ? .malformed : .malformedTrailer }
            state = blank ? .done : .trailerStart
        case .done:
            return nil
        }
        return nil
    }

    private mutating func countTrailerByte() -> ChunkedBodyRefusal? {
        trailerBytes += 1
        return trailerBytes > maxTrailerBytes ? .trailerTooLarge : nil
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }
}

/// Why a chunked body is refused; `rawValue` is the reason slug.
public enum ChunkedBodyRefusal: String, Error, Sendable, Equatable, CaseIterable {
    /// A size that is not hex, a missing CRLF, a control byte in an extension (400).
    case malformed = "chunked_body_malformed"
    /// A size of 16¹⁵ or more, more than 15 significant hex digits (413).
    case chunkSizeTooLarge = "chunk_size_too_large"
    /// A size line over the decoder's `maxLineBytes` (400).
    case lineTooLarge = "chunk_line_too_large"
    /// A trailer line that is not `token ":" value` CRLF (400).
    case malformedTrailer = "trailer_malformed"
    /// Trailer fields over the decoder's `maxTrailerBytes` (431).
    case trailerTooLarge = "trailer_too_large"

    /// The status to answer with.
    public var status: Int {
        switch self {
        case .chunkSizeTooLarge: 413
        case .trailerTooLarge: 431
        default: 400
        }
    }
}
