import Sessions
import Synchronization

/// What one request's phases learn, carried from the route to ``RequestFinisher/finish(_:status:)``
/// (Pingora's per-request context): the fields of its access-log line and the counters it moves.
///
/// Written by the phase that runs, read once by `finish`. A proxied request may finish on another
/// thread than the one that routed it (a standard-mode Android handshake, a stream cut by a stop),
/// so the fields sit behind a lock; it is never contended (one writer at a time).
final class RequestRecord: Sendable {
    struct Fields {
        var route = Route.unknown
        var provider: String?
        var deviceID: String?
        /// The publishable app key's name, on handshake routes that require one.
        var app: String?
        var platform: SessionPlatform?
        var reason: String?
        var status = 0
        var bytesOut: Int64 = 0
        /// The provider's status line code, when a proxied request got that far.
        var upstreamStatus: Int?
        /// Seconds from sending the upstream request to its response head (proxied requests).
        var upstreamHeadSeconds: Double?
        /// The tokens the provider reported for a metered call, once its answer carried them.
        var inputTokens: Int?
        var outputTokens: Int?
        /// Counters to move when the request finishes, in the order the phases noted them; nil
        /// while there are none (most proxied requests), so copying the fields costs no array.
        var events: [MetricEvent]?
        /// A store failure's own slug (`sqlite_busy`, `pg_connection`, …) and the operation, for
        /// the `store_error` line written with the request's.
        var storeFailure: (operation: String, reason: String)?
        /// An event the operator must see on its own line (`install_credential_reused`).
        var securityEvent: String?
        var finished = false
    }

    /// A request id, 16 hex characters, unique within the process; echoed as `X-Request-Id` on
    /// Keyward's own answers and `X-Keyward-Request-Id` on proxied ones (the provider's id stays).
    let id: String
    /// When the request was routed, Unix milliseconds; nil for one the HTTP layer refused.
    let startMillis: Int64?
    /// The request method; nil for one the HTTP layer refused.
    let method: String?
    /// The client's address: the TCP peer, or what a trusted front says (`TrustedProxies`);
    /// "-" when neither is an IP address.
    let client: String
    /// The bucket of the per-client handshake limiter: the IPv4 address or the IPv6 /64.
    let limiterKey: String
    /// The request's path without its query (which may carry a key), as sent; nil for one the
    /// HTTP layer refused.
    let path: String?
    /// `User-Agent`, at most 256 bytes of it; "" when absent.
    let userAgent: String
    /// Body bytes received.
    let bytesIn: Int
    private let fields = Mutex(Fields())

    init(
        id: String, startMillis: Int64?, method: String?, client: IPAddress? = nil, path: String? = nil,
        userAgent: String = "", bytesIn: Int = 0
    ) {
        self.id = id
        self.startMillis = startMillis
        self.method = method
        let clientText = client?.description ?? "-"
        self.client = clientText
        // An IPv4 address is its own limiter key: its text is made once.
        self.limiterKey = client.map { $0.isIPv4 ? clientText : $0.limiterKey } ?? "-"
        self.path = path
        self.userAgent = userAgent.utf8.count <= 256 ? userAgent : String(decoding: userAgent.utf8.prefix(256), as: UTF8.self)
        self.bytesIn = bytesIn
    }

    func update(_ change: (inout Fields) -> Void) { fields.withLock { change(&$0) } }
    var snapshot: Fields { fields.withLock { $0 } }

    /// Notes a counter to move when the request finishes.
    func note(_ event: MetricEvent) { fields.withLock { $0.events = ($0.events ?? []) + [event] } }

    /// Marks the request finished once; returns false when it already was (a second completion
    /// from a racing cancel must not log twice).
    func markFinished(status: Int) -> Bool {
        fields.withLock { fields in
            guard !fields.finished else { return false }
            fields.finished = true
            if fields.status == 0 { fields.status = status }
            return true
        }
    }
}

/// Request ids: a random per-process prefix and a counter, so ids never repeat and cost nothing.
final class RequestIDGenerator: Sendable {
    private let prefix: UInt64
    private let counter = Atomic<UInt64>(0)

    init(seed: UInt64) { prefix = seed & 0xFFFF_FFFF }

    func next() -> String {
        let value = (prefix << 32) | (counter.add(1, ordering: .relaxed).newValue & 0xFFFF_FFFF)
        // Lowercase hex, zero-padded to 16 digits, written in place.
        return String(unsafeUninitializedCapacity: 16) { text in
            for index in 0..<16 {
                let nibble = UInt8(truncatingIfNeeded: value >> UInt64(60 - 4 * index)) & 0x0F
                text[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            }
            return 16
        }
    }
}
