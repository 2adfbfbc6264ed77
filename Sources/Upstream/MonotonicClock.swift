#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Milliseconds on CLOCK_MONOTONIC: immune to wall-clock changes, meaningful only as differences.
/// Used only by the multi thread's idle timer; the timer's decision itself takes `now` as a parameter.
enum MonotonicClock {
    static func nowMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
