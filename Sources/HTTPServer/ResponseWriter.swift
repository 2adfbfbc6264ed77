/// Answers one request, now or later, from any thread.
///
/// The handler receives a writer and must eventually call exactly one of
/// ``respond(status:headers:body:)`` or ``startStream(status:headers:)``.
/// Until then the connection waits: it costs no thread and does not
/// time out. Later calls are ignored. A writer released without an answer
/// answers 500 `{"error":"internal_error"}` itself, so a forgotten path
/// cannot hang a client.
public final class ResponseWriter: Sendable {
    private let context: EngineExchange

    init(context: EngineExchange) {
        self.context = context
    }

    deinit {
        context.answerInternalErrorIfPending()
    }

    /// Sends a complete response with a fixed-length body.
    ///
    /// - Parameters:
    ///   - status: 200–599 (RFC 9110 §15); anything else sends 500 instead.
    ///   - headers: fields in order. `Content-Length` and `Transfer-Encoding` are
    ///     ignored (the server frames the body); `Date` is added when absent;
    ///     `Connection: close` closes the connection after this response. A field
    ///     with CR, LF or NUL turns the response into 500 (no response splitting).
    ///   - body: the bytes, copied once. Not sent for HEAD, 204 or 304 (RFC 9110 §9.3.2, §15.3.5).
    public func respond(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        context.respond(status: status, headers: headers, body: body)
    }

    /// Sends the status and headers now and the body as it is written to the
    /// returned stream.
    ///
    /// - Parameters:
    ///   - status: 200–599; anything else sends 500 and the stream is born aborted.
    ///   - headers: as for ``respond(status:headers:body:)``, except that a valid
    ///     `Content-Length` makes the body exactly that long (a stream finished
    ///     short is cut); without one the body is chunked on HTTP/1.1
    ///     (RFC 9112 §7.1) and delimited by closing the connection on HTTP/1.0.
    /// - Returns: the stream; if a response was already given, a stream that is
    ///   already closed (writes return false, `onClose` fires when set).
    public func startStream(status: Int, headers: [(String, String)] = []) -> ResponseStream {
        context.startStream(status: status, headers: headers)
        return ResponseStream(context: context)
    }

    /// Called once (on a server thread, must not block) when the connection
    /// ends before the response was fully delivered: the client left while the
    /// answer was being prepared (its close or reset is seen at once), while it was
    /// sent, or the server stopped.
    /// Fires at once if that already happened. Use it to cancel work done for
    /// the answer (an upstream call). The same slot as ``ResponseStream/onClose``.
    public var onClose: (@Sendable () -> Void)? {
        get { context.onClose }
        set { context.onClose = newValue }
    }

    /// False once a response has been given or the client has gone: answering then does nothing.
    public var isPending: Bool {
        context.isAwaitingResponse
    }
}
