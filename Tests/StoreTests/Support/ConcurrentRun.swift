import Foundation
import Synchronization

/// Counts outcomes from many threads.
final class Tally: Sendable {
    private let wins = Atomic<Int>(0)
    private let failures = Mutex<[String]>([])

    func win() { wins.add(1, ordering: .relaxed) }
    /// Keeps the first ten errors (enough to diagnose, short enough to read) and counts the rest.
    func fail(_ error: any Error) {
        failures.withLock { list in
            if list.count < 10 { list.append(String(describing: error)) } else if list.count == 10 { list.append("…and more") }
        }
    }

    var winCount: Int { wins.load(ordering: .relaxed) }
    var errors: [String] { failures.withLock { $0 } }
}

/// Runs `body(i)` for i in 0..<count on `count` real threads released together by one gate, so the
/// calls genuinely overlap (a dispatch pool would run only a core's worth at a time), and returns
/// when all have finished.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let gate = NSCondition()
    let open = Mutex(false)
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        let thread = Thread {
            gate.lock()
            while !open.withLock({ $0 }) { gate.wait() }
            gate.unlock()
            body(index)
            done.leave()
        }
        thread.stackSize = 512 * 1024
        thread.start()
    }
    gate.lock()
    open.withLock { $0 = true }
    gate.broadcast()
    gate.unlock()
    done.wait()
}
