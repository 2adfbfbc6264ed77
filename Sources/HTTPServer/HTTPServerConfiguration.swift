#if canImport(Glibc)
import Glibc
#endif

/// How an ``HTTPServer`` listens and what it bounds.
///
/// Every limit here is enforced before the handler runs; a connection over a
/// limit is refused by libmicrohttpd (connection counts) or answered with
/// `{"error":"<code>"}` and closed (head size, body size).
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
    /// Open connections over the whole server. At the limit libmicrohttpd stops accepting, so
    /// further ones wait in the listen backlog until a slot frees. It is split evenly among
    /// the `threads`, so each thread's share is the real bound.
    public var connectionLimit: Int
    /// Open connections per client IP address; 0 = unlimited. Over it, a connection is accepted and closed at once.
    public var perIPConnectionLimit: Int
    /// Seconds a connection may sit idle (no bytes either way) before it is
    /// closed; 0 = never. A connection waiting on the handler or on a stream's
    /// producer is suspended and does not time out.
    public var connectionTimeoutSeconds: Int
    /// Bytes allowed for the request head: the request line plus every header
    /// line (name, value and separators). Over it → 431 `{"error":"bad_request"}`
    /// and the connection closed (RFC 6585 §5).
    public var maxHeaderBytes: Int
    /// Header fields allowed in a request head (Apache's `LimitRequestFields` default is the same
    /// 100). Over it → 431 `{"error":"bad_request"}` and the connection closed. libmicrohttpd
    /// keeps ~56 bytes of its per-connection pool for each field, so without this bound a head
    /// of a few hundred short fields left no room to send the answer.
    public var maxHeaderFields: Int
    /// Bytes a ``ResponseStream`` buffers before ``ResponseStream/write(_:)``
    /// returns false (its high-water mark). Memory per stream stays below this
    /// plus one write.
    public var streamHighWaterBytes: Int
    /// listen(2) backlog.
    public var listenBacklog: Int
    /// Milliseconds between checks of sleeping connections (waiting for a late
    /// answer or for a stream's producer) for a client that closed or reset
    /// the connection; 0 = never check. libmicrohttpd does not watch suspended
    /// connections, so this bounds how late `onClose` can fire for them.
    public var departureCheckMilliseconds: Int

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
        listenBacklog: Int = 1024,
        departureCheckMilliseconds: Int = 250
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
        self.departureCheckMilliseconds = departureCheckMilliseconds
    }

    /// Bytes of libmicrohttpd's per-connection memory pool. It holds the request head as read
    /// (`maxHeaderBytes`), a ~56-byte record per field (none per query argument: it is left none to
    /// store), then the answer's head as written, which
    /// must fit beside them or libmicrohttpd closes the connection without a word. Room is kept for
    /// an answer head of 8 KiB (the most `Upstream` forwards, as nginx's `proxy_buffer_size`) plus
    /// its own lines. libmicrohttpd zeroes the whole pool for every request, so it is no larger.
    var connectionPoolBytes: Int {
        maxHeaderBytes + maxHeaderFields * 64 + 12 * 1024
    }

    /// Online CPU cores (sysconf), at least 1. Read once at configuration time, never per request.
    public static func onlineCores() -> Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
