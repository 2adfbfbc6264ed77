import HTTP1Codec

/// Turns a response body, handed over in pieces as the producer writes them, into the bytes that
/// go on the wire for the framing the head announced (``ResponseHeadWriter/BodyFraming``).
///
/// - chunked (RFC 9112 §7.1): each non-empty piece becomes `size CRLF data CRLF`; the end is the
///   last chunk `0 CRLF CRLF` (no trailer fields);
/// - Content-Length (RFC 9112 §6.2): pieces pass unchanged, and bytes past the declared length are
///   dropped: more than declared would be read as the start of the next response;
/// - until close (HTTP/1.0, length unknown): pieces pass unchanged;
/// - none (HEAD, 204, 304): nothing is sent.
///
/// The data arrays are passed on as they are, never copied: the frame bytes around them are
/// separate pieces, for `writev`.
struct BodyFramer {
    /// How the end of the body goes out.
    enum End: Equatable {
        /// The body is complete: send these bytes (the last chunk, or nothing), then the
        /// connection may carry the next exchange.
        case complete([UInt8])
        /// Fewer bytes than the declared length were written: the connection must be cut so the
        /// client sees a truncated body, never a clean end.
        case truncated
        /// The body ends when the connection closes (HTTP/1.0 without a length).
        case closeConnection
    }

    let framing: ResponseHeadWriter.BodyFraming
    /// Bytes still allowed by a declared length; unused otherwise.
    private(set) var remaining: Int

    /// - Parameter framing: what the head announced.
    init(_ framing: ResponseHeadWriter.BodyFraming) {
        self.framing = framing
        if case .contentLength(let length) = framing { remaining = length } else { remaining = 0 }
    }

    /// Appends the wire pieces for `data` to `pieces`.
    mutating func frame(_ data: [UInt8], into pieces: inout [[UInt8]]) {
        guard !data.isEmpty else { return }
        switch framing {
        case .none:
            return
        case .untilClose:
            pieces.append(data)
        case .chunked:
            pieces.append(ChunkFraming.prefix(count: data.count))
            pieces.append(data)
            pieces.append(ChunkFraming.suffix)
        case .contentLength:
            guard remaining > 0 else { return }
            if data.count <= remaining {
                pieces.append(data)
                remaining -= data.count
            } else {
                pieces.append(Array(data[..<remaining]))
                remaining = 0
            }
        }
    }

    /// How the body ends now that the producer finished.
    func finish() -> End {
        switch framing {
        case .none: .complete([])
        case .chunked: .complete(ChunkFraming.last)
        case .contentLength: remaining == 0 ? .complete([]) : .truncated
        case .untilClose: .closeConnection
        }
    }
}
