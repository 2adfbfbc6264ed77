import Foundation
import KeywardSupport
import Synchronization

/// Runs the store operations requests need on a small pool of threads of its own, so that no
/// event loop ever waits on the database.
///
/// Bounded both ways: at most `poolSize` operations run at once (each on its own thread, with its
/// own connection from the store's pool) and at most `queueCapacity` wait. An operation that is
/// not finished `operationTimeoutMillis` after it was submitted is answered with `store_timeout`
/// (what it returns later is dropped); one submitted to a full queue is answered at once with
/// `store_queue_full`. Both are `StoreError.Kind.unavailable`: 503 with `Retry-After`.
///
/// An operation no caller waits on (``runUnattended(_:completion:)``: a give-back of credits) has
/// neither bound: a deadline would only drop it, and a dropped give-back leaves credits spent that
/// the call never used. Each is the aftermath of a call that was already admitted, so there are
/// never more of them queued than calls in flight.
final class StoreExecutor: @unchecked Sendable {
    private struct Job {
        let ticket: StoreTicket
        let work: @Sendable (StoreTicket) -> Void
    }

    let poolSize: Int
    let queueCapacity: Int
    private let watch: DeadlineWatch
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [Job] = []
    private var head = 0
    private var stopped = false
    private let running = Atomic<Int>(0)
    private let refusedFull = Atomic<Int>(0)

    init(poolSize: Int, queueCapacity: Int, watch: DeadlineWatch) {
        self.poolSize = max(1, poolSize)
        self.queueCapacity = max(1, queueCapacity)
        self.watch = watch
        for index in 0..<self.poolSize {
            let thread = Thread { [self] in
                nameCurrentThread("kw-store-\(index)")
                work()
            }
            thread.start()
        }
    }

    /// Operations running now.
    var inUse: Int { running.load(ordering: .relaxed) }
    /// Operations waiting for a thread now.
    var queueDepth: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count - head
    }
    /// Operations refused because the queue was full, so far.
    var queueFullCount: Int { refusedFull.load(ordering: .relaxed) }

    /// Runs `operation` on a store thread and hands its result to `completion`, on that thread,
    /// exactly once: the result, or `store_timeout` at the deadline (on the watch's thread), or
    /// `store_queue_full` at once on the caller's thread.
    /// - Parameter undoLate: run on the store thread with a result that came after the deadline
    ///   had answered (the caller was told `store_timeout`, yet the operation went through), to
    ///   take back what the caller will never act on.
    func run<T: Sendable>(
        _ operation: @escaping @Sendable () throws(StoreError) -> T,
        undoLate: (@Sendable (T) -> Void)? = nil,
        completion: @escaping @Sendable (Result<T, StoreError>) -> Void
    ) {
        let ticket = watch.register {
            completion(.failure(StoreError(.unavailable, "store_timeout", detail: "no answer within the operation deadline")))
        }
        enqueue(operation, ticket: ticket, bounded: true, undoLate: undoLate, completion: completion)
    }

    /// Runs `operation` on a store thread however long it waits for one, and hands its result to
    /// `completion` on that thread: no deadline answers it and a full queue does not refuse it;
    /// only a stopped executor does (`store_stopped`, at once on the caller's thread).
    func runUnattended<T: Sendable>(
        _ operation: @escaping @Sendable () throws(StoreError) -> T,
        completion: @escaping @Sendable (Result<T, StoreError>) -> Void
    ) {
        enqueue(operation, ticket: StoreTicket(onExpire: {}), bounded: false, undoLate: nil, completion: completion)
    }

    private func enqueue<T: Sendable>(
        _ operation: @escaping @Sendable () throws(StoreError) -> T, ticket: StoreTicket, bounded: Bool,
        undoLate: (@Sendable (T) -> Void)?, completion: @escaping @Sendable (Result<T, StoreError>) -> Void
    ) {
        let job = Job(ticket: ticket) { ticket in
            let result: Result<T, StoreError>
            do throws(StoreError) { result = .success(try operation()) } catch { result = .failure(error) }
            if ticket.settle() {
                completion(result)
            } else if let undoLate, case .success(let late) = result {
                undoLate(late)
            }
        }
        condition.lock()
        guard !stopped, !bounded || queue.count - head < queueCapacity else {
            let wasStopped = stopped
            condition.unlock()
            if ticket.settle() {
                if !wasStopped { refusedFull.add(1, ordering: .relaxed) }
                completion(.failure(StoreError(.unavailable, wasStopped ? "store_stopped" : "store_queue_full")))
            }
            return
        }
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Stops the threads once the queue is empty; later submissions are refused.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == queue.count && !stopped { condition.wait() }
            if head == queue.count {
                condition.unlock()
                return
            }
            let job = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            // Past its deadline while queued: already answered, do not touch the store for it.
            guard !job.ticket.isSettled else { continue }
            running.add(1, ordering: .relaxed)
            job.work(job.ticket)
            running.subtract(1, ordering: .relaxed)
        }
    }
}
