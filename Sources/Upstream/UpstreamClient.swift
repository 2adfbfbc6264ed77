/// Keyward's calling side: streamed HTTP/1.1 requests to providers and Google over one libcurl
/// multi handle driven by the client's own thread (see `MultiLoop`). Keyward runs one client per
/// shard (whose thread also runs that shard's HTTP server) and one for the Google calls.
///
/// Each request gets an easy handle reset to libcurl's defaults (`EasyHandlePool`); connections are
/// reused through the multi handle's connection cache (`connectionCacheSize` idle ones kept), at most
/// `maxConnectionsPerHost` per host in use (more requests wait for a free one).
/// HTTP/1.1 only: fields reach the upstream in the order and case given, and the per-host limit
/// counts real connections, as nginx's `proxy_pass` does.
/// Keep a client as long as its thread is needed; `shutdown()` (or releasing it) cancels what is running.
public final class UpstreamClient: Sendable {
    /// Connection pool and TLS settings.
    public struct Configuration: Sendable {
        /// Most simultaneous connections to one host:port (CURLMOPT_MAX_HOST_CONNECTIONS); 0 = no limit.
        public var maxConnectionsPerHost: Int
        /// Most simultaneous connections overall (CURLMOPT_MAX_TOTAL_CONNECTIONS); 0 = no limit.
        public var maxTotalConnections: Int
        /// Idle connections kept for reuse (CURLMOPT_MAXCONNECTS); 0 = libcurl's default, four times the
        /// transfers in progress. That default shrinks as a burst winds down and closes warm connections:
        /// with 64 requests in flight it opened a new upstream connection for about one request in 37
        /// (`bench/proxy.sh`), so the default here is a fixed 256.
        public var connectionCacheSize: Int
        /// A PEM CA bundle to verify upstream certificates against instead of the system's
        /// (CURLOPT_CAINFO); nil = the system bundle. Verification itself is never turned off.
        public var caBundlePath: String?
        /// An explicit egress proxy URL (CURLOPT_PROXY); nil = none, and `http_proxy`-style
        /// environment variables are ignored.
        public var proxy: String?

        public init(
            maxConnectionsPerHost: Int = 64, maxTotalConnections: Int = 0, connectionCacheSize: Int = 256,
            caBundlePath: String? = nil, proxy: String? = nil
        ) {
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.maxTotalConnections = maxTotalConnections
            self.connectionCacheSize = connectionCacheSize
            self.caBundlePath = caBundlePath
            self.proxy = proxy
        }
    }

    private let configuration: Configuration
    private let loop: MultiLoop
    /// The URLs this client was last asked for, parsed once each.
    private let urls = ParsedURLCache()

    /// Starts the client's thread. Calls `curl_global_init` first if this is the first client.
    /// - Parameter threadName: the thread's name for the OS (`top -H`, perf; 15 bytes kept), which
    ///   tells a shard's loop from the Google client's.
    public init(configuration: Configuration = Configuration(), threadName: String = "kw-upstream") {
        self.configuration = configuration
        loop = MultiLoop(configuration: configuration, threadName: threadName)
    }

    /// Same as `init(configuration:)` with only the per-host connection limit set.
    public convenience init(maxConnectionsPerHost: Int) {
        self.init(configuration: Configuration(maxConnectionsPerHost: maxConnectionsPerHost))
    }

    deinit { loop.shutdown(wait: false) }

    /// Starts `request` and streams its response to `handler` (on the client's thread).
    /// Never throws: an unusable request completes the handler with `.invalidRequest`.
    /// - Returns: the transfer, to `resume()` after back-pressure or to `cancel()`.
    @discardableResult
    public func start(_ request: UpstreamRequest, handler: any UpstreamResponseHandler) -> UpstreamTransfer {
        let state = TransferState(
            handler: handler, connectTimeoutMs: request.connectTimeoutMs, idleTimeoutMs: request.idleTimeoutMs,
            clock: loop.clock)
        state.requestBodyBytes = request.body.count
        do {
            try EasyHandleSetup.configure(state, request: request, configuration: configuration, urls: urls)
        } catch {
            state.releaseHandle()
            state.setupError = error
        }
        loop.enqueueStart(state)
        return UpstreamTransfer(state: state, loop: loop)
    }

    /// Runs `source` on the client's thread from its next turn on; see ``AttachedEventSource``.
    /// A client gets at most one; a second replaces the first.
    public func attach(_ source: AttachedEventSource) {
        loop.attach(source)
    }

    /// A new descriptor for the epoll set the client's thread waits on, so that an attached
    /// source can register its own descriptors in it (each with a token that has
    /// ``AttachedEventSource/tokenTag`` set) and be handed their readiness from the thread's one
    /// wait, instead of waiting on a set of its own. The caller owns the descriptor and closes it;
    /// the set lives until both it and the client's own are closed, so registering in it after the
    /// client shut down is harmless. Returns -1 after ``shutdown()`` or when the process is out of
    /// descriptors.
    public func sharedEventSet() -> Int32 {
        loop.duplicateEventSet()
    }

    /// Makes the thread running the attached source take a turn soon, to look at its deadline
    /// again (after another thread changed it). Cheap; does nothing on that thread itself.
    public func wakeAttachedSource() {
        loop.wake()
    }

    /// Cancels every transfer (each completes with `.cancelled`), stops the thread and frees the
    /// multi handle; waits for that unless called from a handler. Later `start`s complete at once
    /// with `.cancelled`.
    public func shutdown() {
        loop.shutdown(wait: true)
    }

    /// True when called on the client's own thread (inside a handler), where blocking is forbidden.
    var isOnClientThread: Bool { loop.isLoopThread }
}
