#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Milliseconds on CLOCK_MONOTONIC: immune to wall-clock changes, meaningful only as differences.
/// Used only by the multi thread's timers; the timer decisions themselves take `now` as a parameter.
enum MonotonicClock {
    static func nowMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// The multi thread's reading of `MonotonicClock`, taken once per loop turn (right after
/// `curl_multi_poll` returns) instead of once per libcurl callback: the bytes a turn processes were
/// already waiting when it began, so the turn's time is their arrival time to within the turn.
///
/// Concurrency: written and read only on the multi thread (libcurl callbacks run there too).
final class LoopClock: @unchecked Sendable {
    private(set) var nowMs: Int64 = MonotonicClock.nowMs()

    /// Reads the clock again; returns the new reading.
    @discardableResult
    func tick() -> Int64 {
        nowMs = MonotonicClock.nowMs()
        return nowMs
    }
}
