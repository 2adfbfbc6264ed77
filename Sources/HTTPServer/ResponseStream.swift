/// The body of a streamed response, written from any thread.
///
/// Flow control: every write is buffered (never dropped) and sent as the
/// client reads. When more than `streamHighWaterBytes` (configuration) are
/// buffered, ``write(_:)`` returns false: stop producing until ``onWritable``
/// fires, which it does once the buffer has drained to half that mark. So a
/// stream's memory stays below the high-water mark plus one write, however
/// long it runs and however slow the client.
///
/// Ending: ``finish()`` after the last write; ``abort()`` to cut the connection
/// once what is buffered went out (the client sees a truncated body, never a clean end). Releasing a stream
/// that was neither finished nor aborted aborts it.
///
/// The client leaving: ``onClose`` fires once, on a server thread, when the
/// connection ends before a finished stream was fully delivered: client gone,
/// network error, timeout or server stop. While data flows, a departure shows
/// as a send error at once; while the buffer is empty the socket is still watched
/// (EPOLLRDHUP), so a close or reset is seen at once too. A client that vanishes
/// without either (a pulled cable) is only noticed by writing: producers that may
/// be silent for minutes should still send a heartbeat (an SSE comment such as `": ping\n\n"`).
public final class ResponseStream: Sendable {
    private let context: EngineExchange

    init(context: EngineExchange) {
        self.context = context
    }

    deinit {
        context.streamAbortIfUnfinished()
    }

    /// Buffers `bytes` for the client.
    /// - Returns: true to keep writing; false when the buffer is over its high-water
    ///   mark (wait for ``onWritable``) or the stream has ended (then ``onClose``
    ///   has fired or will; the bytes are dropped).
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        context.streamWrite(bytes)
    }

    /// Buffers a copy of `bytes` (for producers holding borrowed memory, such as libcurl's write callback).
    /// - Returns: as ``write(_:)``.
    @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        context.streamWrite(Array(bytes))
    }

    /// Ends the body once everything buffered has been sent (the chunked
    /// terminator on HTTP/1.1). Later writes are refused.
    public func finish() {
        context.streamFinish()
    }

    /// Sends what is buffered, then closes the connection: the client sees a
    /// truncated response (fewer bytes than its `Content-Length`, or a chunked
    /// body without its last chunk). Later writes are refused. A client already
    /// gone, or a server stopping, is cut at once. Use when the upstream failed
    /// after the head was sent.
    public func abort() {
        context.streamAbort()
    }

    /// Bytes buffered and not yet handed to the connection.
    public var bufferedBytes: Int {
        context.streamBufferedBytes
    }

    /// Called (on a server thread, without locks held) after a write returned
    /// false, once the buffer has drained to half the high-water mark. Must not block.
    public var onWritable: (@Sendable () -> Void)? {
        get { context.onWritable }
        set { context.onWritable = newValue }
    }

    /// Called once (on a server thread) when the connection ends before the
    /// finished stream was delivered; at once if that already happened. Must not block.
    /// Cleared after firing, so closures capturing the stream do not leak.
    /// The same slot as ``ResponseWriter/onClose``.
    public var onClose: (@Sendable () -> Void)? {
        get { context.onClose }
        set { context.onClose = newValue }
    }
}
