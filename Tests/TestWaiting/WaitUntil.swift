import Foundation

/// Waits for an event a test cannot be told of directly (a counter moving, a line logged, a
/// process exiting) by looking at `condition` every `pollMillis` until it holds or `timeout`
/// seconds have passed. Tests assert the result, so an event that never comes fails the test
/// instead of hanging it, and one that comes early costs no fixed sleep.
/// - Returns: whether `condition` held before the deadline.
public func waitUntil(timeout: TimeInterval = 10, pollMillis: UInt32 = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() >= deadline { return false }
        usleep(pollMillis * 1_000)
    }
    return true
}

/// Watches that `condition` stays false for `seconds`: the bounded observation window of a test
/// asserting that something does *not* happen (no event, no second answer). Looks every
/// `pollMillis`, so a breach is reported as soon as it is seen.
/// - Returns: true when `condition` never held during the window.
public func staysFalse(for seconds: TimeInterval, pollMillis: UInt32 = 5, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return false }
        usleep(pollMillis * 1_000)
    }
    return !condition()
}
