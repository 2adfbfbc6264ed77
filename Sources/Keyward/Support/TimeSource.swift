import Foundation
import Synchronization

/// Where the application reads the time. Every time-dependent decision takes it as a parameter,
/// so tests pin the clock (time-dependent code takes the clock as a parameter).
public protocol TimeSource: Sendable {
    /// Milliseconds since the Unix epoch.
    func nowMillis() -> Int64
}

extension TimeSource {
    /// Whole seconds since the Unix epoch.
    public func nowSeconds() -> Int64 { nowMillis() / 1000 }
}

/// The wall clock (`clock_gettime(CLOCK_REALTIME)`).
public struct SystemTimeSource: TimeSource {
    /// The system's real-time clock.
    public init() {}
    /// Milliseconds since the Unix epoch; may step backwards when the clock is set.
    public func nowMillis() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// A clock that only moves when told to: for tests and for replaying captured data at its time.
public final class ManualTimeSource: TimeSource {
    private let millis: Atomic<Int64>

    /// Starts at `millis` milliseconds since the Unix epoch.
    public init(millis: Int64) { self.millis = Atomic(millis) }

    /// Starts at `seconds` since the Unix epoch.
    public convenience init(seconds: Int64) { self.init(millis: seconds * 1000) }

    /// The time last set, milliseconds since the Unix epoch.
    public func nowMillis() -> Int64 { millis.load(ordering: .relaxed) }

    /// Sets the time, in milliseconds since the Unix epoch.
    public func set(millis value: Int64) { millis.store(value, ordering: .relaxed) }

    /// Moves the time forward by `delta` milliseconds.
    public func advance(millis delta: Int64) { millis.add(delta, ordering: .relaxed) }
}
