import CShims
import Foundation
import KeywardSupport
import Synchronization

/// At most `threads` threads for work that blocks (the Google calls of a standard-mode Android
/// handshake), so it never runs on an event loop and never costs a thread per request.
///
/// Up to `threads` jobs run at once and up to `queueLimit` more wait, in order. A job offered
/// beyond that is refused at once (``submit(_:)`` returns false). Threads start when work arrives
/// and end when the queue is empty, so an idle executor holds none.
final class BlockingExecutor: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var running = 0
        var pending: Int { jobs.count - head }
    }

    private let state = Mutex(State())
    private let name: String
    private let threads: Int
    private let queueLimit: Int

    /// - Parameters: `name` prefixes the threads' names (`name-N`, 15 bytes at most, for `top -H`).
    init(name: String, threads: Int, queueLimit: Int) {
        self.name = name
        self.threads = max(1, threads)
        self.queueLimit = max(0, queueLimit)
    }

    /// Queues `job`; false when `queueLimit` jobs already wait (the caller answers 503).
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        let (accepted, spawnIndex) = state.withLock { state -> (Bool, Int?) in
            guard state.pending < queueLimit + (threads - state.running) else { return (false, nil) }
            state.jobs.append(job)
            guard state.running < threads else { return (true, nil) }
            state.running += 1
            return (true, state.running)
        }
        if let spawnIndex {
            let thread = Thread { [self] in
                nameCurrentThread("\(name)-\(spawnIndex)")
                drain()
            }
            thread.start()
        }
        return accepted
    }

    /// Runs queued jobs until none is left, then lets the thread end.
    private func drain() {
        while let job = next() { job() }
    }

    private func next() -> (@Sendable () -> Void)? {
        state.withLock { state in
            guard state.head < state.jobs.count else {
                state.jobs.removeAll(keepingCapacity: true)
                state.head = 0
                state.running -= 1
                return nil
            }
            let job = state.jobs[state.head]
            state.head += 1
            // Under steady load the queue never empties: drop the taken prefix once it dominates.
            if state.head > 64 && state.head * 2 > state.jobs.count {
                state.jobs.removeFirst(state.head)
                state.head = 0
            }
            return job
        }
    }
}
