import CMicroHTTPD
import CShims
import Dispatch
import KeywardSupport
#if canImport(Glibc)
import Glibc
#endif

/// Keyward's listening side: HTTP/1.1 over GNU libmicrohttpd 0.9.75.
///
/// libmicrohttpd runs a pool of `threads` workers, each an epoll loop
/// (`MHD_USE_EPOLL` with an internal polling thread per worker), or, given an ``ExternalLoop``, no thread at all: the caller's
/// loop runs it (see `HTTPServer+ExternalLoop.swift`). For each request the server checks the head (framing rules of
/// RFC 9112 that libmicrohttpd leaves open, head size), asks `bodyLimit` how
/// many body bytes it may read, reads the whole body, then calls `handler` on
/// the worker thread with the head, the body and a ``ResponseWriter``.
///
/// Requests the server answers itself, then closes the connection:
/// - 400 `{"error":"bad_request"}`: HTTP/1.1 without `Host` or with two;
///   `Content-Length` with `Transfer-Encoding`; differing or malformed
///   `Content-Length`; a transfer coding other than `chunked`; `Transfer-Encoding`
///   on HTTP/1.0; a field name that is not a token (`Content-Length : 5`); a
///   field value with control characters; a request-target with whitespace, control bytes or a `#`.
/// - 413 `{"error":"payload_too_large"}`: a `Content-Length` over the limit, answered from the head
///   before any body byte is read, then the connection closes; a declared body of at most 8 MiB is
///   read and dropped after the answer (a client sending its whole body before reading then gets
///   the 413, not a reset); or a chunked body that grows over it.
/// - 431 `{"error":"bad_request"}`: a head over `maxHeaderBytes` or with more than `maxHeaderFields` fields,
///   or a `Cookie` field of more pairs than libmicrohttpd's per-connection pool can hold records for.
///
/// libmicrohttpd is left no query arguments to store (the handler reads them from the target), so
/// any number of them within `maxHeaderBytes` is served.
/// Connection counts (total, per IP) and idle time are bounded by libmicrohttpd.
public final class HTTPServer: Sendable {
    /// Handles one request: its head, its complete body (at most the limit
    /// `bodyLimit` gave; empty when none was sent) and the writer to answer with.
    /// Runs on a server worker thread: answer at once, or keep the writer and
    /// answer later from any thread, but do not block the worker.
    public typealias Handler = @Sendable (HTTPRequestHead, _ body: [UInt8], ResponseWriter) -> Void

    struct Running {
        let daemon: OpaquePointer
        let port: UInt16
        /// The daemon's reference to the core (its callbacks' `cls`), released after stopping.
        let core: Unmanaged<ServerCore>
        let departureCheck: DispatchSourceTimer?
        /// The listening socket once `drain` stopped accepting; closed only after the daemon stops (libmicrohttpd's rule).
        var quiescedSocket: Int32?
    }

    enum Lifecycle {
        case idle
        case running(Running)
        case stopped
    }

    let core: ServerCore
    /// Keyward's own engine when it serves this server (``HTTPServer/Engine``); nil = libmicrohttpd.
    let engine: EngineServer?
    /// For external-loop servers the lock is also held while the loop runs the daemon, so
    /// ``stop()`` can never free it under a running `MHD_run`.
    let lifecycle = Locked(Lifecycle.idle)

    /// - Parameters:
    ///   - configuration: address and bounds.
    ///   - bodyLimit: the most body bytes to accept for this head (bytes, ≥ 0),
    ///     decided before any body byte is read. Called on a worker thread.
    ///   - onRefusal: told of each request the server refused itself (400/413/431), of each whose
    ///     chunked body libmicrohttpd refused (400/413, its own page sent), and of each the client
    ///     abandoned before its body was complete (499), with its reason slug, for logs
    ///     and metrics. Called on a worker thread; must not block.
    ///   - externalLoop: nil = libmicrohttpd's own `configuration.threads` workers; otherwise no
    ///     thread of its own: the loop it describes runs the server (``ExternalLoop``), and
    ///     "worker thread" above means that loop's thread.
    ///   - handler: see ``Handler``.
    public init(
        configuration: HTTPServerConfiguration,
        bodyLimit: @escaping @Sendable (HTTPRequestHead) -> Int,
        onRefusal: (@Sendable (HTTPRequestRefusal) -> Void)? = nil,
        externalLoop: ExternalLoop? = nil,
        handler: @escaping Handler
    ) {
        core = ServerCore(
            configuration: configuration, bodyLimit: bodyLimit, onRefusal: onRefusal, externalLoop: externalLoop,
            handler: handler)
        engine = Engine.selected == .keyward
            ? EngineServer(configuration: configuration, bodyLimit: bodyLimit, onRefusal: onRefusal,
                           externalLoop: externalLoop, handler: handler)
            : nil
    }

    /// Which engine serves HTTP: read once per process from the environment variable
    /// `KEYWARD_HTTP_ENGINE` (`keyward` for Keyward's own engine built on `HTTP1Codec`; anything
    /// else, or unset, for libmicrohttpd, the default until the own engine passes the whole suite).
    public enum Engine: Sendable, Equatable {
        case libmicrohttpd
        case keyward

        /// The engine this process uses.
        public static let selected: Engine = {
            guard let value = getenv("KEYWARD_HTTP_ENGINE") else { return .libmicrohttpd }
            return String(cString: value) == "keyward" ? .keyward : .libmicrohttpd
        }()
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
        let configuration = core.configuration
        guard let address = SocketAddress(host: configuration.host, port: configuration.port) else {
            throw .invalidHost(configuration.host)
        }
        if core.externalLoop != nil && configuration.port != 0 && address.isTaken() {
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
        guard core.externalLoop != nil, sibling.core.externalLoop != nil, port != 0 else { throw .notStartable }
        guard let address = SocketAddress(host: core.configuration.host, port: port) else {
            throw .invalidHost(core.configuration.host)
        }
        try start(at: address, port: port)
    }

    private func start(at address: SocketAddress, port: UInt16) throws(HTTPServerError) {
        let configuration = core.configuration
        for (field, value, minimum) in [
            ("threads", configuration.threads, 1), ("connectionLimit", configuration.connectionLimit, 1),
            ("perIPConnectionLimit", configuration.perIPConnectionLimit, 0),
            ("connectionTimeoutSeconds", configuration.connectionTimeoutSeconds, 0),
            ("maxHeaderBytes", configuration.maxHeaderBytes, 256),
            ("maxHeaderFields", configuration.maxHeaderFields, 1),
            ("streamHighWaterBytes", configuration.streamHighWaterBytes, 1),
            ("listenBacklog", configuration.listenBacklog, 1),
            ("departureCheckMilliseconds", configuration.departureCheckMilliseconds, 0),
        ] where value < minimum || value > Int(Int32.max) {
            throw .invalidConfiguration(field)
        }
        if let engine {
            try engine.start(at: address, port: port)
            return
        }

        try lifecycle.withLock { (lifecycle: inout Lifecycle) throws(HTTPServerError) in
            guard case .idle = lifecycle else { throw .notStartable }
            let retained = Unmanaged.passRetained(core)
            let cls = retained.toOpaque()
            let daemon = address.withSockaddr { sockaddr -> OpaquePointer? in
                var settings = keyward_mhd_settings(
                    address: sockaddr,
                    thread_pool_size: UInt32(configuration.threads),
                    connection_limit: UInt32(configuration.connectionLimit),
                    per_ip_connection_limit: UInt32(configuration.perIPConnectionLimit),
                    connection_timeout_seconds: UInt32(configuration.connectionTimeoutSeconds),
                    connection_memory_limit: configuration.connectionPoolBytes,
                    listen_backlog: UInt32(configuration.listenBacklog),
                    access_handler: accessHandlerCallback,
                    access_handler_cls: cls,
                    completed: requestCompletedCallback,
                    completed_cls: cls,
                    uri_log: uriLogCallback,
                    uri_log_cls: cls,
                    external_loop: core.externalLoop == nil ? 0 : 1)
                return keyward_mhd_start(&settings)
            }
            guard let daemon else {
                retained.release()
                throw .startFailed(host: configuration.host, port: port)
            }
            var departureCheck: DispatchSourceTimer?
            if configuration.departureCheckMilliseconds > 0 {
                let interval = DispatchTimeInterval.milliseconds(configuration.departureCheckMilliseconds)
                let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
                timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
                timer.setEventHandler { [core] in core.checkDepartures() }
                timer.resume()
                departureCheck = timer
            }
            lifecycle = .running(Running(
                daemon: daemon, port: keyward_mhd_bound_port(daemon), core: retained,
                departureCheck: departureCheck, quiescedSocket: nil))
        }
    }

    /// The bound TCP port while running (the ephemeral one when configured with 0); 0 otherwise.
    public var port: UInt16 {
        if let engine { return UInt16(engine.boundPort.load(ordering: .acquiring)) }
        return lifecycle.withLock { lifecycle in
            if case .running(let running) = lifecycle { return running.port }
            return 0
        }
    }

    /// Requests in progress (a request line received, the response not yet
    /// fully sent), open streams included. Idle keep-alive connections do not count.
    public var activeRequests: Int {
        if let engine { return engine.activeRequests.load(ordering: .relaxed) }
        return core.activeRequests.load(ordering: .relaxed)
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
    /// its deadline cuts them. Answers already queued and shared canned refusals are unchanged.
    /// Any thread; cannot be undone.
    public func closeConnectionsAfterAnswers() {
        engine?.closesConnections.store(true, ordering: .relaxed)
        core.closesConnections.store(true, ordering: .relaxed)
    }

    /// Stops accepting connections (they wait in the listen backlog until ``stop()`` or
    /// ``closeQuiescedListener()`` refuses them); requests on open connections are still served. The first step of ``drain(gracePeriodMilliseconds:)``,
    /// for owners that drain several servers against one deadline. Any thread.
    /// - Returns: false when the server is not running.
    @discardableResult
    public func quiesce() -> Bool {
        if let engine { return engine.quiesce() }
        return lifecycle.withLock { lifecycle -> Bool in
            guard case .running(var running) = lifecycle else { return false }
            if running.quiescedSocket == nil {
                let socket = MHD_quiesce_daemon(running.daemon)
                running.quiescedSocket = socket >= 0 ? socket : nil
                lifecycle = .running(running)
            }
            return true
        }
    }

    /// Takes the listening socket ``quiesce()`` took back out of the listening state
    /// (`shutdown(2)`; Linux then answers new connections with a reset, ECONNREFUSED to the
    /// client, so a front moves on to another instance) instead of leaving them in the backlog
    /// until ``stop()``. The descriptor itself stays open until ``stop()``, as libmicrohttpd
    /// requires of a quiesced socket. Connections already accepted are served on. No effect
    /// unless quiesced. Any thread.
    public func closeQuiescedListener() {
        if let engine { return engine.closeQuiescedListener() }
        lifecycle.withLock { lifecycle in
            guard case .running(let running) = lifecycle, let socket = running.quiescedSocket else { return }
            _ = shutdown(socket, Int32(SHUT_RDWR))
        }
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
    /// (their `onClose` fires); waits for the worker threads to finish.
    /// Requests still waiting for a late response are closed without one;
    /// answering them afterwards does nothing. Idempotent. Never call it from a
    /// handler or a stream callback: it joins the worker threads those run on.
    public func stop() {
        if let engine { return engine.stop() }
        let stopping = lifecycle.withLock { lifecycle -> Running? in
            guard case .running(let running) = lifecycle else {
                lifecycle = .stopped
                return nil
            }
            lifecycle = .stopped
            return running
        }
        guard let stopping else { return }
        // A check still running after cancel() finds only completed requests: harmless.
        stopping.departureCheck?.cancel()
        // libmicrohttpd panics when stopped with a suspended connection: wake them all first.
        for context in core.suspended.beginStopping() {
            context.beginStopping()
        }
        // Without a thread of its own the daemon takes resumed connections back only when run.
        if core.externalLoop != nil { _ = MHD_run(stopping.daemon) }
        MHD_stop_daemon(stopping.daemon)
        if let socket = stopping.quiescedSocket {
            close(socket)
        }
        stopping.core.release()
    }
}
