import Synchronization

/// Keeps a repeating log line from flooding the log: the first line for a key is written, then at
/// most one per `intervalMillis` for that key, each carrying how many were held back since the
/// last one written. Times come from the caller (the logger's clock), so tests pin them.
///
/// Keys are fixed words chosen by the code (an operation and a store reason slug), never request
/// data, so the table stays as small as that vocabulary; it is capped at `keyLimit` anyway, and a
/// key beyond the cap is never held back.
public final class LogThrottle: Sendable {
    /// The least time between two lines of one key, milliseconds.
    public let intervalMillis: Int64
    /// The most keys remembered at once.
    static let keyLimit = 1_024

    private struct State {
        var lastWrittenMillis: Int64
        var heldBack: Int
    }
    private let states = Mutex<[String: State]>([:])

    /// - Parameter intervalMillis: the least time between two lines of one key (default one second).
    public init(intervalMillis: Int64 = 1_000) {
        self.intervalMillis = intervalMillis
    }

    /// Decides whether the line for `key` at `nowMillis` (Unix ms) is written.
    /// - Returns: nil to hold it back (it is counted); otherwise how many lines of `key` were held
    ///   back since the last one written (0 for the first, or after a quiet interval).
    public func admit(key: String, nowMillis: Int64) -> Int? {
        states.withLock { states -> Int? in
            guard var state = states[key] else {
                if states.count < Self.keyLimit { states[key] = State(lastWrittenMillis: nowMillis, heldBack: 0) }
                return 0
            }
            // A clock set backwards counts as time passed: lines are never held back indefinitely.
            let elapsed = nowMillis - state.lastWrittenMillis
            guard elapsed >= intervalMillis || elapsed < 0 else {
                state.heldBack += 1
                states[key] = state
                return nil
            }
            let heldBack = state.heldBack
            states[key] = State(lastWrittenMillis: nowMillis, heldBack: 0)
            return heldBack
        }
    }
}
