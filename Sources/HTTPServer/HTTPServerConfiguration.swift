#if canImport(Glibc)
import Glibc
#endif

/// How an ``HTTPServer`` listens and what it bounds.
///
/// Every limit here is enforced before the handler runs; a connection over a
/// connection count waits in the backlog or is closed at once, a request over a head or body
/// limit is answered with `{"error":"<code>"}` and closed.
public struct HTTPServerConfiguration: Sendable {
    /// Numeric IPv4 or IPv6 address to bind (`"127.0.0.1"`, `"0.0.0.0"`, `"::"`).
    /// Host names are not resolved: a typo must fail `start()`, not bind elsewhere.
    public var host: String
    /// TCP port; 0 picks an ephemeral port (read it back from ``HTTPServer/port``).
    public var port: UInt16
    /// Worker threads, each running its own epoll loop over its share of the
    /// connections. Handlers run on these threads: a handler that waits must
    /// answer later (``ResponseWriter`` may be completed from any thread). Ignored by a server
    /// given an ``HTTPServer/ExternalLoop``: it has no threads of its own.
    public var threads: Int
    /// Open connections over the whole server. At the limit the server stops accepting, so
    /// further ones wait in the listen backlog until a slot frees. It is split evenly among
    /// the `threads`, so each thread's share is the real bound.
    public var connectionLimit: Int
    /// Open connections per client IP address; 0 = unlimited. Over it, a connection is accepted and closed at once.
    public var perIPConnectionLimit: Int
    /// Seconds a connection may sit idle (no bytes either way) before it is closed, and the
    /// most a request head may take from its first byte to its last (a head trickled a byte at a
    /// time is cut then, holding no more than its read buffer); 0 = never. A connection waiting
    /// on the handler or on a stream's producer does not time out (the client leaving ends it).
    public var connectionTimeoutSeconds: Int
    /// Bytes allowed for the request head: the request line plus every header
    /// line (name, value and separators). Over it → 431 `{"error":"bad_request"}`
    /// and the connection closed (RFC 6585 §5).
    public var maxHeaderBytes: Int
    /// Header fields allowed in a request head (Apache's `LimitRequestFields` default is the same
    /// 100). Over it → 431 `{"error":"bad_request"}` and the connection closed.
    public var maxHeaderFields: Int
    /// Bytes a ``ResponseStream`` buffers before ``ResponseStream/write(_:)``
    /// returns false (its high-water mark). Memory per stream stays below this
    /// plus one write.
    public var streamHighWaterBytes: Int
    /// listen(2) backlog.
    public var listenBacklog: Int

    /// - Parameters: see the properties; `threads` defaults to the number of online cores.
    public init(
        host: String = "127.0.0.1",
        port: UInt16 = 0,
        threads: Int = HTTPServerConfiguration.onlineCores(),
        connectionLimit: Int = 4096,
        perIPConnectionLimit: Int = 0,
        connectionTimeoutSeconds: Int = 60,
        maxHeaderBytes: Int = 16 * 1024,
        maxHeaderFields: Int = 100,
        streamHighWaterBytes: Int = 256 * 1024,
        listenBacklog: Int = 1024
    ) {
        self.host = host
        self.port = port
        self.threads = threads
        self.connectionLimit = connectionLimit
        self.perIPConnectionLimit = perIPConnectionLimit
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderFields = maxHeaderFields
        self.streamHighWaterBytes = streamHighWaterBytes
        self.listenBacklog = listenBacklog
    }

    /// Online CPU cores (sysconf), at least 1. Read once at configuration time, never per request.
    public static func onlineCores() -> Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
