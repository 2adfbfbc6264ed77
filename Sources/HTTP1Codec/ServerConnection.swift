/// One HTTP/1.1 server connection as a state machine, without I/O (the shape of h11's): bytes
/// received go in, events come out, and the connection's state says what may happen next.
/// The event loop only moves bytes between the socket and this.
///
/// States: `.readingHead` (the parser has the bytes since the request began) → `.readingBody`
/// (Content-Length or chunked, counted against the body limit) → `.awaitingAnswer` (nothing more is
/// read: bytes of a pipelined next request wait in the caller's buffer until the answer is sent)
/// → `.readingHead` again on keep-alive, or `.closed`. Every refusal ends in `.closed`: once a
/// request cannot be framed, where the next one starts is unknown. One passes through
/// `.discardingBody` first: a declared `Content-Length` over the body limit is refused from the
/// head, before any body byte is read, and a body of at most ``maxDiscardedBodyBytes`` (without
/// `Expect: 100-continue`, whose client waits and sends nothing) is then read and dropped, so a
/// client that sends its whole body before reading gets the 413, not a reset (RFC 9112 §9.6: a
/// server closes in stages).
///
/// The buffer contract: the caller keeps the bytes it received and has not yet had consumed, and
/// calls ``next(_:bodyLimit:)`` with them (oldest first); each event says how many bytes from the
/// front it consumed. Offsets in an event index the buffer given to that call.
public struct ServerConnection: Sendable {
    /// Where the connection is (see the type's description).
    public enum State: Sendable, Equatable {
        /// Reading a request head (also the state of a connection idle between requests).
        case readingHead
        /// Reading a request body (Content-Length or chunked), or about to report its end.
        case readingBody
        /// The request is complete; nothing is read until ``ServerConnection/answerSent(closing:)``.
        case awaitingAnswer
        /// Refused with 413 from its head: the declared body is read and dropped, then the connection
        /// closes (the caller bounds how long it waits for those bytes).
        case discardingBody
        /// Over: refused, answered with a close, or left by the client.
        case closed
    }

    /// A refusal the server answers itself before the connection closes.
    public struct Refusal: Sendable, Equatable {
        /// 400, 413, 431 or 505.
        public let status: Int
        /// The API's error code: `bad_request` or `payload_too_large`.
        public let code: String
        /// The reason slug for the log (``HeadRefusal``, ``ChunkedBodyRefusal`` or a body limit's).
        public let reason: String
        /// Body bytes still to read and drop once the answer is sent (``State/discardingBody``); 0 = close at once.
        public let discardsBodyBytes: Int

        /// - Parameters: see the properties.
        public init(status: Int, code: String, reason: String, discardsBodyBytes: Int = 0) {
            self.status = status
            self.code = code
            self.reason = reason
            self.discardsBodyBytes = discardsBodyBytes
        }
    }

    public enum Event: Sendable, Equatable {
        /// Read more from the socket (everything given was consumed or is still needed).
        case needMore(consumed: Int)
        /// A request head. `sendContinue`: answer `100 Continue` now (RFC 9110 §10.1.1), the client may be waiting for it.
        case head(ParsedRequestHead, sendContinue: Bool, consumed: Int)
        /// Body bytes at these offsets.
        case body(Range<Int>, consumed: Int)
        /// The request is complete; the connection waits for its answer.
        case endOfRequest(consumed: Int)
        /// Answer with this refusal, then close.
        case refuse(Refusal)
        /// Waiting for the answer: read nothing (the socket's read interest may be dropped).
        case waitForAnswer
        /// The connection is over.
        case closed
    }

    /// The current state.
    public private(set) var state: State = .readingHead
    /// The head limits every request on this connection is read with.
    public let limits: RequestHeadLimits
    /// The longest declared body read and dropped after a 413 for a length over the limit; a longer
    /// one gets its 413 and the connection closes at once.
    public let maxDiscardedBodyBytes: Int
    private var discardRemaining = 0
    private var parser: RequestHeadParser
    private var closesAfterAnswer = false
    private var body: BodyReader = .none
    private var bodyLimit = 0
    private var bodyReceived = 0

    private enum BodyReader: Sendable {
        case none
        case length(remaining: Int)
        case chunked(ChunkedBodyDecoder)
    }

    /// A new connection, waiting for its first request head.
    /// - Parameter maxDiscardedBodyBytes: default 8 MiB.
    public init(limits: RequestHeadLimits = RequestHeadLimits(), maxDiscardedBodyBytes: Int = 8 << 20) {
        self.limits = limits
        self.maxDiscardedBodyBytes = maxDiscardedBodyBytes
        parser = RequestHeadParser(limits: limits)
    }

    /// Whether bytes of a request have arrived since the last answer (a head in progress, a body):
    /// the client leaving now abandons a request.
    public private(set) var requestInProgress = false

    /// The next event for the bytes in `buffer`.
    /// - Parameter bodyLimit: the most body bytes this request may send, asked once its head is read.
    public mutating func next(_ buffer: UnsafeRawBufferPointer, bodyLimit: (ParsedRequestHead) -> Int) -> Event {
        switch state {
        case .closed: return .closed
        case .awaitingAnswer: return .waitForAnswer
        case .readingHead: return readHead(buffer, bodyLimit: bodyLimit)
        case .readingBody: return readBody(buffer)
        case .discardingBody:
            let take = min(discardRemaining, buffer.count)
            discardRemaining -= take
            if discardRemaining == 0 {
                state = .closed
                return take > 0 ? .needMore(consumed: take) : .closed
            }
            return .needMore(consumed: take)
        }
    }

    private mutating func readHead(_ buffer: UnsafeRawBufferPointer, bodyLimit limitFor: (ParsedRequestHead) -> Int) -> Event {
        if !buffer.isEmpty { requestInProgress = true }
        switch parser.parse(buffer) {
        case .needMore:
            return .needMore(consumed: 0)
        case .refused(let refusal):
            return refuse(status: refusal.status, code: "bad_request", reason: refusal.rawValue)
        case .head(let head):
            closesAfterAnswer = head.closesConnection
            bodyReceived = 0
            bodyLimit = max(0, limitFor(head))
            // Every request reads as head, body events, then `.endOfRequest`, with a body or without.
            state = .readingBody
            switch head.framing {
            case .none, .contentLength(0):
                body = .none
            case .contentLength(let length):
                // Refused before a byte of the body is read, and before any 100 Continue.
                if length > bodyLimit {
                    let discards = length <= maxDiscardedBodyBytes && !head.expectsContinue
                    state = discards ? .discardingBody : .closed
                    discardRemaining = discards ? length : 0
                    return .refuse(Refusal(
                        status: 413, code: "payload_too_large", reason: "content_length_over_limit",
                        discardsBodyBytes: discards ? length : 0))
                }
                body = .length(remaining: length)
            case .chunked:
                body = .chunked(ChunkedBodyDecoder())
            }
            let hasBody: Bool
            if case .none = body { hasBody = false } else { hasBody = true }
            let sendContinue = head.expectsContinue && head.version == .http11 && hasBody
            return .head(head, sendContinue: sendContinue, consumed: head.length)
        }
    }

    private mutating func readBody(_ buffer: UnsafeRawBufferPointer) -> Event {
        switch body {
        case .none:
            state = .awaitingAnswer
            return .endOfRequest(consumed: 0)
        case .length(let remaining):
            if remaining == 0 {
                state = .awaitingAnswer
                return .endOfRequest(consumed: 0)
            }
            if buffer.isEmpty { return .needMore(consumed: 0) }
            let take = min(remaining, buffer.count)
            body = .length(remaining: remaining - take)
            return .body(0..<take, consumed: take)
        case .chunked(var decoder):
            let step = decoder.decode(buffer)
            body = .chunked(decoder)
            switch step {
            case .needMore:
                return .needMore(consumed: buffer.count)
            case .data(let span, let consumed):
                bodyReceived += span.count
                if bodyReceived > bodyLimit {
                    return refuse(status: 413, code: "payload_too_large", reason: "chunked_body_over_limit")
                }
                return .body(span, consumed: consumed)
            case .end(let consumed):
                state = .awaitingAnswer
                return .endOfRequest(consumed: consumed)
            case .refused(let refusal):
                return refuse(status: refusal.status, code: refusal.status == 413 ? "payload_too_large" : "bad_request",
                              reason: refusal.rawValue)
            }
        }
    }

    /// The answer to the current request has been sent in full.
    /// - Parameter closing: the answer ended the connection (`Connection: close`, a close-delimited body, a drain).
    /// - Returns: whether the connection stays open for the next request (keep-alive, RFC 9112 §9.3).
    public mutating func answerSent(closing: Bool) -> Bool {
        guard state == .awaitingAnswer else {
            state = .closed
            return false
        }
        if closing || closesAfterAnswer {
            state = .closed
            return false
        }
        parser = RequestHeadParser(limits: limits)
        body = .none
        requestInProgress = false
        state = .readingHead
        return true
    }

    /// The client closed its side (a read returned 0).
    /// - Returns: the refusal to report when a request was abandoned before its body was complete
    ///   (499 `client_closed`, reason `body_incomplete`; nothing can be sent), else nil.
    public mutating func clientClosed() -> Refusal? {
        defer { state = .closed }
        if state == .readingBody {
            return Refusal(status: 499, code: "client_closed", reason: "body_incomplete")
        }
        return nil
    }

    private mutating func refuse(status: Int, code: String, reason: String) -> Event {
        state = .closed
        return .refuse(Refusal(status: status, code: code, reason: reason))
    }
}
