import Foundation
@testable import Keyward
import Store
import XCTest

/// The metered give-backs waiting in memory: the store keeps counting the whole hold (never less
/// than the settled figure) until one flush writes every scope's sum.
final class GiveBackLedgerTests: XCTestCase {
    private var directory: URL!

    override func tearDown() {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    private func openStore() throws -> SQLiteStore {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("give-backs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try SQLiteStore(path: directory.appendingPathComponent("keyward.sqlite").path)
    }

    func testGiveBacksWaitThenOneFlushLowersEachScopeBySum() throws {
        let store = try openStore()
        let day: Int64 = 20_000
        for device in ["a", "a", "b"] {
            _ = try store.spendCredits(CreditSpend(deviceID: device, cost: 5, installLimit: nil, countsTowardApp: true, appLimit: 100, warnAt: nil, day: day))
        }
        let ledger = GiveBackLedger()
        ledger.add(deviceID: "a", day: day, credits: 2, countsTowardApp: true)
        ledger.add(deviceID: "a", day: day, credits: 3, countsTowardApp: true)
        ledger.add(deviceID: "b", day: day, credits: 4, countsTowardApp: false)
        ledger.add(deviceID: "b", day: day, credits: 0, countsTowardApp: true)
        XCTAssertEqual(ledger.pending(scope: CreditSpend.installScope("a"), day: day), 5)
        XCTAssertEqual(ledger.pending(scope: CreditSpend.appScope, day: day), 5)
        XCTAssertTrue(ledger.hasPending(scope: CreditSpend.installScope("b"), day: day))
        XCTAssertFalse(ledger.hasPending(scope: CreditSpend.installScope("b"), day: day + 1))
        // Waiting: the store still counts every hold.
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("a"), day: day), 10)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 15)

        XCTAssertEqual(try ledger.flush(store), 14)
        XCTAssertTrue(ledger.isEmpty)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("a"), day: day), 5)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("b"), day: day), 1)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 10)
        XCTAssertEqual(try ledger.flush(store), 0, "a second flush has nothing to give")
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 10)
    }

    func testAFailedFlushKeepsTheCreditsSpent() throws {
        let store = try openStore()
        let day: Int64 = 20_000
        _ = try store.spendCredits(CreditSpend(deviceID: "a", cost: 5, installLimit: nil, countsTowardApp: false, appLimit: nil, warnAt: nil, day: day))
        let ledger = GiveBackLedger()
        ledger.add(deviceID: "a", day: day, credits: 3, countsTowardApp: false)
        let broken = SwitchableStore(store)
        broken.isDown = true
        XCTAssertThrowsError(try ledger.flush(broken))
        // Lost, not retried: the store's figure stays above the settled one (refusing early only).
        XCTAssertTrue(ledger.isEmpty)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("a"), day: day), 5)
    }
}
