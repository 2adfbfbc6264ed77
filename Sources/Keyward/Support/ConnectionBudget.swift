import Foundation

/// How many client connections the open-file limit leaves room for.
///
/// Every connection is a descriptor, and a proxied one holds a second toward its provider for as
/// long as it streams; the store, the logs, the listeners and libcurl's resolver need a few more.
/// So the default `[listen] max_connections` is half of what is left after a reserve: a client
/// past it waits in the listen backlog instead of failing with EMFILE halfway through a request.
public struct ConnectionBudget: Sendable, Equatable {
    /// Descriptors kept for everything that is not a client connection or its upstream transfer.
    public static let reserve: UInt64 = 256

    /// The soft limit before `raiseOpenFileLimit()` ran.
    public let previousLimit: UInt64
    /// The soft limit in force now.
    public let limit: UInt64
    /// The hard limit (what an unprivileged process may raise its soft limit to).
    public let hardLimit: UInt64

    /// `(limit - reserve) / 2`, within `[listen] max_connections`'s range (16-1,000,000).
    public var defaultMaxConnections: Int {
        let room = limit > Self.reserve ? (limit - Self.reserve) / 2 : 0
        return Int(min(max(room, 16), 1_000_000))
    }

    /// The line `serve` logs at start.
    public var message: String {
        let change = previousLimit == limit ? "is \(limit)" : "raised from \(previousLimit) to \(limit)"
        return "open-file limit \(change) (hard limit \(hardLimit)); default max_connections \(defaultMaxConnections)"
    }

    /// The budget for given limits (tests; `raiseOpenFileLimit` reads the process's).
    public init(previousLimit: UInt64, limit: UInt64, hardLimit: UInt64) {
        self.previousLimit = previousLimit
        self.limit = limit
        self.hardLimit = hardLimit
    }

    /// Raises the process's soft `RLIMIT_NOFILE` to its hard limit (no privilege needed; an
    /// "unlimited" hard limit is taken as the kernel's `nr_open`, 1,048,576 by default) and returns
    /// the budget. When the raise is refused (a sandbox), the limit in force stays.
    public static func raiseOpenFileLimit() -> ConnectionBudget {
        var current = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &current) == 0 else {
            return ConnectionBudget(previousLimit: 1024, limit: 1024, hardLimit: 1024)
        }
        let previous = UInt64(current.rlim_cur)
        var hard = UInt64(current.rlim_max)
        if current.rlim_max == rlim_t.max { hard = 1 << 20 }  // RLIM_INFINITY
        guard previous < hard else { return ConnectionBudget(previousLimit: previous, limit: previous, hardLimit: hard) }
        var raised = current
        raised.rlim_cur = rlim_t(hard)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 {
            return ConnectionBudget(previousLimit: previous, limit: hard, hardLimit: hard)
        }
        return ConnectionBudget(previousLimit: previous, limit: previous, hardLimit: hard)
    }
}
