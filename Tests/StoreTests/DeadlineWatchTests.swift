import Foundation
import Synchronization
import TestWaiting
import XCTest
@testable import Store

/// The deadline watch answers an operation exactly once, and lets go of what the operation's
/// deadline answer holds as soon as the result came first.
final class DeadlineWatchTests: XCTestCase {
    private final class Count: Sendable {
        private let value = Atomic<Int>(0)
        func add() { value.add(1, ordering: .relaxed) }
        var now: Int { value.load(ordering: .relaxed) }
    }

    /// Stands for a request the deadline's answer captures.
    private final class Held: Sendable {
        let freed: Count
        init(freed: Count) { self.freed = freed }
        deinit { freed.add() }
    }

    /// A ticket whose deadline answer holds a `Held` (the only reference), with the counts of its
    /// frees and of the deadline's answers.
    private func registerHoldingARequest(_ watch: DeadlineWatch) -> (StoreTicket, Count, Count) {
        let freed = Count()
        let expiredAnswers = Count()
        let held = Held(freed: freed)
        let ticket = watch.register { withExtendedLifetime(held) { expiredAnswers.add() } }
        return (ticket, freed, expiredAnswers)
    }

    func testASettledTicketFreesWhatItsDeadlineAnswerHeldBeforeTheDeadline() {
        // An hour: the watch keeps the ticket in its queue for that long.
        let watch = DeadlineWatch(timeoutMillis: 3_600_000)
        defer { watch.stop() }
        let (ticket, freed, expiredAnswers) = registerHoldingARequest(watch)
        XCTAssertEqual(freed.now, 0, "the pending ticket holds its deadline answer")
        XCTAssertEqual(ticket.settle(), true)
        XCTAssertEqual(freed.now, 1, "settling dropped the answer at once")
        XCTAssertEqual(ticket.settle(), false, "only the first claim owns the answer")
        XCTAssertEqual(expiredAnswers.now, 0)
        XCTAssertEqual(watch.expiredCount, 0)
    }

    func testAnUnsettledTicketIsAnsweredByItsDeadlineOnceAndTheResultComesTooLate() {
        let watch = DeadlineWatch(timeoutMillis: 1, granularityMillis: 1)
        defer { watch.stop() }
        let (ticket, freed, expiredAnswers) = registerHoldingARequest(watch)
        XCTAssertTrue(waitUntil { expiredAnswers.now == 1 })
        XCTAssertTrue(waitUntil { freed.now == 1 }, "the answer is let go once given")
        XCTAssertEqual(watch.expiredCount, 1)
        XCTAssertEqual(ticket.isSettled, true)
        XCTAssertEqual(ticket.settle(), false, "the result after the deadline must not answer again")
        XCTAssertEqual(expiredAnswers.now, 1)
    }
}
