/// What a ``ResponseWriter`` and a ``ResponseStream`` answer through: one request's exchange in
/// whichever server engine read it (libmicrohttpd's ``RequestContext``, or the engine's
/// ``EngineExchange``). Every method may be called from any thread and never blocks.
protocol AnswerSink: AnyObject, Sendable {
    /// A complete answer; a status outside 200–599 or an unusable header answers 500 instead.
    /// Ignored once an answer was given or the connection ended.
    func respond(status: Int, headers: [(String, String)], body: [UInt8])
    /// Starts a streamed answer (see ``ResponseWriter/startStream(status:headers:)``).
    func startStream(status: Int, headers: [(String, String)])
    /// A writer released unanswered: answer 500 `internal_error` if nothing was given.
    func answerInternalErrorIfPending()
    /// No answer given yet and the connection open.
    var isAwaitingResponse: Bool { get }
    /// The `onClose` slot (fires once when the connection ends before the answer was delivered).
    var onClose: (@Sendable () -> Void)? { get set }

    /// Buffers stream bytes. - Returns: false over the high-water mark or once the stream ended.
    func streamWrite(_ bytes: [UInt8]) -> Bool
    /// Ends the stream once what is buffered is sent.
    func streamFinish()
    /// Cuts the stream once what is buffered is sent (at once when the client is gone or the server stops).
    func streamAbort()
    /// Stream bytes buffered and not yet handed to the connection.
    var streamBufferedBytes: Int { get }
    /// The `onWritable` slot.
    var onWritable: (@Sendable () -> Void)? { get set }
    /// A stream released neither finished nor aborted: abort it.
    func streamAbortIfUnfinished()
}

extension RequestContext: AnswerSink {
    func respond(status: Int, headers: [(String, String)], body: [UInt8]) {
        if let response = PreparedResponse.make(status: status, headers: headers, body: body) {
            deliver(response)
        } else if let canned = core.canned.internalError {
            deliver(PreparedResponse(pointer: canned, status: 500, owned: false))
        }
    }

    func startStream(status: Int, headers: [(String, String)]) {
        _ = beginStream(status: status, headers: headers)
    }

    func answerInternalErrorIfPending() {
        if isAwaitingResponse, let canned = core.canned.internalError {
            deliver(PreparedResponse(pointer: canned, status: 500, owned: false))
        }
    }

    var onClose: (@Sendable () -> Void)? {
        get { shared.withLock { $0.onClose } }
        set { setOnClose(newValue) }
    }

    var onWritable: (@Sendable () -> Void)? {
        get { shared.withLock { $0.stream?.onWritable } }
        set { setOnWritable(newValue) }
    }
}
