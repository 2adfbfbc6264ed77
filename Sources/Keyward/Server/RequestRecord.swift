import HTTPServer
import Synchronization

/// What one request's phases learn, carried from route to log (the Pingora per-request context).
///
/// Written by the phase that runs, read by the log phase at the end. A proxied request finishes
/// on the upstream thread, so the fields sit behind a lock; contention is nil (one writer at a time).
final class RequestRecord: Sendable {
    struct Fields {
        var route = "unknown"
        var provider: String?
        var deviceID: String?
        var platform: String?
        var reason: String?
        var status = 0
        var bytesOut: Int64 = 0
        var finished = false
    }

    /// A request id, 16 hex characters, unique within the process; echoed as `X-Request-Id` on
    /// Keyward's own answers and `X-Keyward-Request-Id` on proxied ones (the provider's id stays).
    let id: String
    let startMillis: Int64
    let method: String
    private let fields = Mutex(Fields())

    init(id: String, startMillis: Int64, method: String) {
        self.id = id
        self.startMillis = startMillis
        self.method = method
    }

    func update(_ change: (inout Fields) -> Void) { fields.withLock { change(&$0) } }
    var snapshot: Fields { fields.withLock { $0 } }

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
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
