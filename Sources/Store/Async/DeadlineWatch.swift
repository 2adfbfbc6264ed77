import Foundation
import KeywardSupport
import Synchronization

/// Exactly-once settlement of one store operation: either its result or its deadline answers,
/// never both. Whoever calls `settle()` first and gets true owns the answer.
///
/// The deadline's answer is dropped the moment the ticket is settled: it captures the operation's
/// completion and through it the waiting request, which must be freed when the request ends, not
/// held (in the watch's queue) until the deadline it no longer needs has passed.
public final class StoreTicket: Sendable {
    private let settled = Atomic<Bool>(false)
    private let expiry: Mutex<(@Sendable () -> Void)?>

    init(onExpire: @escaping @Sendable () -> Void) { expiry = Mutex(onExpire) }

    /// Claims the answer. True once, for the first caller; false after the deadline answered.
    public func settle() -> Bool { claim() != nil }

    /// Whether the answer was already given (by the result or by the deadline).
    public var isSettled: Bool { settled.load(ordering: .acquiring) }

    /// The deadline's answer, taken out, for the first claimant only (nil when the result came
    /// first); the watch calls it.
    func claim() -> (@Sendable () -> Void)? {
        guard settled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return nil }
        return expiry.withLock { answer in
            defer { answer = nil }
            return answer
        }
    }
}

/// One thread that answers store operations whose deadline passed before they did.
///
/// Every operation gets the same timeout, so deadlines arrive in registration order and the
/// watch is a FIFO: O(1) to register, and each wake-up pops every entry that is due (settled
/// ones are simply dropped). It wakes at most every `granularityMillis`, so a deadline fires up
/// to that much late.
final class DeadlineWatch: @unchecked Sendable {
    private struct Entry {
        let deadlineNanos: UInt64
        let ticket: StoreTicket
    }

    /// The one timeout, milliseconds.
    let timeoutMillis: Int
    private let granularityNanos: UInt64
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var entries: [Entry] = []
    private var head = 0
    private var stopped = false
    private let expired = Atomic<Int>(0)

    /// Starts the watch's thread.
    init(timeoutMillis: Int, granularityMillis: Int = 10) {
        self.timeoutMillis = max(1, timeoutMillis)
        granularityNanos = UInt64(max(1, granularityMillis)) * 1_000_000
        let thread = Thread { [self] in
            nameCurrentThread("kw-store-watch")
            run()
        }
        thread.start()
    }

    /// Operations answered by their deadline so far.
    var expiredCount: Int { expired.load(ordering: .relaxed) }

    /// A ticket whose `onExpire` runs (on the watch's thread) unless it is settled within the timeout.
    func register(onExpire: @escaping @Sendable () -> Void) -> StoreTicket {
        let ticket = StoreTicket(onExpire: onExpire)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeoutMillis) * 1_000_000
        condition.lock()
        let wasEmpty = head == entries.count
        entries.append(Entry(deadlineNanos: deadline, ticket: ticket))
        if wasEmpty { condition.signal() }
        condition.unlock()
        return ticket
    }

    /// Stops the thread; tickets not yet settled are answered as expired.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            if head == entries.count {
                if stopped { break }
                entries.removeAll(keepingCapacity: true)
                head = 0
                condition.wait()
                continue
            }
            let now = DispatchTime.now().uptimeNanoseconds
            var due: [StoreTicket] = []
            while head < entries.count, stopped || entries[head].deadlineNanos <= now {
                if !entries[head].ticket.isSettled { due.append(entries[head].ticket) }
                head += 1
            }
            if head > 4_096 && head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
            if !due.isEmpty {
                condition.unlock()
                for ticket in due {
                    guard let answer = ticket.claim() else { continue }
                    expired.add(1, ordering: .relaxed)
                    answer()
                }
                condition.lock()
                continue
            }
            guard head < entries.count else { continue }
            let wait = max(entries[head].deadlineNanos - min(now, entries[head].deadlineNanos), granularityNanos)
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(wait) / 1e9))
        }
        condition.unlock()
    }
}
