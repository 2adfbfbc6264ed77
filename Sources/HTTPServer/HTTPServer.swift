import Dispatch
import KeywardSupport
#if canImport(Glibc)
import Glibc
#endif

/// Keyward's listening side: HTTP/1.1 served by Keyward's own engine (`Engine/`), which reads
/// requests with the strict codec of `HTTP1Codec` (RFC 9112).
///
/// The engine runs `threads` loops, each an epoll loop on a thread of its own over its share of
/// the connections, all watching one listening socket; or, given an ``ExternalLoop``, one loop and
/// no thread at all: the caller's loop runs it (see `HTTPServer+ExternalLoop.swift`). For each
/// request the server reads and checks the head, asks `bodyLimit` how many body bytes it may
/// read, reads the whole body (Content-Length or chunked), then calls `handler` on the loop's
/// thread with the head, the body and a ``ResponseWriter``. Requests on one connection are
/// answered in order, one at a time: the bytes of a pipelined next request wait until the answer
/// before it is sent. `Expect: 100-continue` is answered with `100 Continue` once the head is
/// accepted, and refused with the 413 in its place when the declared body is over the limit.
///
/// Requests the server answers itself, each with `{"error":"<code>"}` and `Keyward-Error: <code>`,
/// then closes the connection (once a request cannot be framed, where the next starts is unknown):
/// - 400 `bad_request`: any head the codec refuses (``HTTP1Codec/HeadRefusal``): HTTP/1.1 without
///   `Host` or with two; `Content-Length` with `Transfer-Encoding`; differing or malformed
///   `Content-Length`; a transfer coding other than `chunked`; `Transfer-Encoding` on HTTP/1.0; a
///   field name that is not a token (a NUL, whitespace before the colon); obs-fold; a field value
///   with control characters; a bare LF; a method that is not a token; a request-target with
///   whitespace, control or non-ASCII bytes or a `#`; a request line not split by single spaces;
///   a malformed chunked body (``HTTP1Codec/ChunkedBodyRefusal``).
/// - 413 `payload_too_large`: a `Content-Length` over the limit, answered from the head before any
///   body byte is read; a declared body of at most 8 MiB is then read and dropped after the answer
///   (a client sending its whole body before reading then gets the 413, not a reset); a chunked
///   body that grows over it; a chunk size of more than 15 hex digits.
/// - 431 `bad_request`: a head over `maxHeaderBytes` or with more than `maxHeaderFields` fields,
///   refused as its bytes arrive. Any number of query arguments or cookie pairs within them is served.
/// - 505 `bad_request`: an HTTP major version other than 1.
///
/// Connection counts (total, per IP) and idle, head and body time are bounded by the configuration.
public final class HTTPServer: Sendable {
    /// Handles one request: its head, its complete body (at most the limit
    /// `bodyLimit` gave; empty when none was sent) and the writer to answer with.
    /// Runs on a server loop thread: answer at once, or keep the writer and
    /// answer later from any thread, but do not block the loop.
    public typealias Handler = @Sendable (HTTPRequestHead, _ body: [UInt8], ResponseWriter) -> Void

    let engine: EngineServer

    /// - Parameters:
    ///   - configuration: address and bounds.
    ///   - bodyLimit: the most body bytes to accept for this head (bytes, ≥ 0),
    ///     decided before any body byte is read. Called on a loop thread.
    ///   - onRefusal: told of each request the server refused itself (400/413/431/505) and of each
    ///     the client abandoned (or left to time out) before its body was complete (499), with its
    ///     reason slug, for logs and metrics. Called on a loop thread; must not block.
    ///   - externalLoop: nil = the server's own `configuration.threads` loops; otherwise no
    ///     thread of its own: the loop it describes runs the server (``ExternalLoop``), and
    ///     "loop thread" above means that loop's thread.
    ///   - handler: see ``Handler``.
    public init(
        configuration: HTTPServerConfiguration,
        bodyLimit: @escaping @Sendable (HTTPRequestHead) -> Int,
        onRefusal: (@Sendable (HTTPRequestRefusal) -> Void)? = nil,
        externalLoop: ExternalLoop? = nil,
        handler: @escaping Handler
    ) {
        engine = EngineServer(
            configuration: configuration, bodyLimit: bodyLimit, onRefusal: onRefusal,
            externalLoop: externalLoop, handler: handler)
    }

    deinit {
        stop()
    }

    /// Binds and starts serving. A server starts at most once.
    /// - Throws: ``HTTPServerError`` — `invalidHost`, `invalidConfiguration`,
    ///   `startFailed` (address in use…), `notStartable` (already started or stopped).
    ///   An external-loop server binds with SO_REUSEPORT (so its siblings can join it); it first
    ///   checks that no one listens on a fixed port already, since the option would otherwise
    ///   quietly share the port with another process's listener instead of failing.
    public func start() throws(HTTPServerError) {
        let configuration = engine.configuration
        guard let address = SocketAddress(host: configuration.host, port: configuration.port) else {
            throw .invalidHost(configuration.host)
        }
        if engine.externalLoop != nil && configuration.port != 0 && address.isTaken() {
            throw .startFailed(host: configuration.host, port: configuration.port)
        }
        try start(at: address, port: configuration.port)
    }

    /// Starts an external-loop server on the port `sibling` (another one, running) is bound to;
    /// the kernel spreads new connections between them (SO_REUSEPORT).
    /// - Throws: as ``start()``; `notStartable` also when either server has no external loop or
    ///   `sibling` is not running.
    public func start(sharingPortWith sibling: HTTPServer) throws(HTTPServerError) {
        let port = sibling.port
        guard engine.externalLoop != nil, sibling.engine.externalLoop != nil, port != 0 else { throw .notStartable }
        guard let address = SocketAddress(host: engine.configuration.host, port: port) else {
            throw .invalidHost(engine.configuration.host)
        }
        try start(at: address, port: port)
    }

    private func start(at address: SocketAddress, port: UInt16) throws(HTTPServerError) {
        let configuration = engine.configuration
        for (field, value, minimum) in [
            ("threads", configuration.threads, 1), ("connectionLimit", configuration.connectionLimit, 1),
            ("perIPConnectionLimit", configuration.perIPConnectionLimit, 0),
            ("connectionTimeoutSeconds", configuration.connectionTimeoutSeconds, 0),
            ("maxHeaderBytes", configuration.maxHeaderBytes, 256),
            ("maxHeaderFields", configuration.maxHeaderFields, 1),
            ("streamHighWaterBytes", configuration.streamHighWaterBytes, 1),
            ("listenBacklog", configuration.listenBacklog, 1),
        ] where value < minimum || value > Int(Int32.max) {
            throw .invalidConfiguration(field)
        }
        try engine.start(at: address, port: port)
    }

    /// The bound TCP port while running (the ephemeral one when configured with 0); 0 otherwise.
    public var port: UInt16 {
        UInt16(engine.boundPort.load(ordering: .acquiring))
    }

    /// Requests in progress (a head received, the response not yet fully sent), open streams
    /// included. Idle keep-alive connections do not count.
    public var activeRequests: Int {
        engine.activeRequests.load(ordering: .relaxed)
    }

    /// Client connections open now, idle keep-alive ones included.
    public var openConnections: Int {
        engine.openConnections.load(ordering: .relaxed)
    }

    /// How many times since start a loop filled its share of ``HTTPServerConfiguration/connectionLimit``
    /// and stopped accepting (further clients wait in the listen backlog until a connection closes).
    public var connectionLimitReachedCount: Int {
        engine.connectionLimitReached.load(ordering: .relaxed)
    }

    /// Graceful shutdown: stops accepting connections, lets the requests in
    /// progress finish (streams included) for up to `gracePeriodMilliseconds`,
    /// then ``stop()``s, cutting whatever is left. Connections that arrive
    /// meanwhile wait in the listen backlog and are refused at the end; requests
    /// on already-open keep-alive connections are still served. Blocks the
    /// caller for at most the grace period (polling every 10 ms). Same thread
    /// rule as ``stop()``.
    public func drain(gracePeriodMilliseconds: Int) {
        closeConnectionsAfterAnswers()
        if quiesce() {
            waitUntilIdle(deadline: .now() + .milliseconds(max(0, gracePeriodMilliseconds)))
        }
        stop()
    }

    /// From now on every answer carries `Connection: close` (RFC 9112 §9.6) and its connection
    /// ends once it is sent, so a keep-alive client takes its next request elsewhere and a drain
    /// ends with the requests in progress instead of serving new ones on open connections until
    /// its deadline cuts them. Answers whose head is already written are unchanged.
    /// Any thread; cannot be undone.
    public func closeConnectionsAfterAnswers() {
        engine.closesConnections.store(true, ordering: .relaxed)
    }

    /// Stops accepting connections (they wait in the listen backlog until ``stop()`` or
    /// ``closeQuiescedListener()`` refuses them); requests on open connections are still served. The first step of ``drain(gracePeriodMilliseconds:)``,
    /// for owners that drain several servers against one deadline. Any thread.
    /// - Returns: false when the server is not running.
    @discardableResult
    public func quiesce() -> Bool {
        engine.quiesce()
    }

    /// Takes the listening socket out of the listening state once ``quiesce()`` stopped accepting
    /// (`shutdown(2)`; Linux then answers new connections with a reset, ECONNREFUSED to the
    /// client, so a front moves on to another instance) instead of leaving them in the backlog
    /// until ``stop()``. The descriptor itself stays open until ``stop()``. Connections already
    /// accepted are served on. No effect unless quiesced. Any thread.
    public func closeQuiescedListener() {
        engine.closeQuiescedListener()
    }

    /// Blocks until no request is in progress (``activeRequests`` is 0) or `deadline` passes,
    /// polling every 10 ms. Never call it on a thread that serves this server.
    /// - Returns: whether the server went idle in time.
    @discardableResult
    public func waitUntilIdle(deadline: DispatchTime) -> Bool {
        while activeRequests > 0 {
            if DispatchTime.now() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }

    /// Stops listening and closes every connection, open streams included
    /// (their `onClose` fires), after one last pass that sends, without waiting, the answers
    /// already given; waits for the loop threads to finish. Requests still waiting for a late
    /// response are closed without one; answering them afterwards does nothing. Idempotent.
    /// Never call it from a handler or a stream callback: it joins the threads those run on (or,
    /// for an external-loop server, waits for the loop's current ``runOnce(descriptorReady:)`` or
    /// ``runOnce(ready:events:)``).
    public func stop() {
        engine.stop()
    }
}
