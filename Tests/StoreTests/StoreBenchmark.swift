import Foundation
import XCTest
@testable import Store

/// Throughput figures for the report, not a test of speed: nothing here asserts a time.
/// Runs only with `KEYWARD_STORE_BENCH=1`, e.g.
/// `KEYWARD_STORE_BENCH=1 swift test --skip-build --filter StoreBenchmarkTests`.
final class StoreBenchmarkTests: XCTestCase {
    static let threads = 2
    static let operationsPerThread = 20_000

    func testSQLiteThroughputWithTwoThreads() throws {
        guard ProcessInfo.processInfo.environment["KEYWARD_STORE_BENCH"] == "1" else {
            throw XCTSkip("set KEYWARD_STORE_BENCH=1 to measure")
        }
        let harness = try SQLiteHarness()   // keeps the temporary directory alive while measuring
        try measureFigures(label: "SQLite", try harness.open())
    }

    /// Prints spends/s (each of a distinct, valid challenge) and CAS/s (each thread advancing its own
    /// device's counter by one, every write succeeding), both with `threads` threads.
    static func figures(_ store: any Store) throws -> (spends: Double, cas: Double) {
        let total = threads * operationsPerThread
        let now = StoreConformance.now
        @Sendable func challenge(_ index: Int) -> [UInt8] {
            (0..<32).map { UInt8(truncatingIfNeeded: index >> (8 * ($0 % 4))) ^ UInt8($0) }
        }
        for index in 0..<total { try store.putChallenge(hash: challenge(index), expiresAt: now + 600) }
        let devices = (0..<threads).map { StoreConformance.iosDevice("bench\($0)") }
        for device in devices { _ = try store.registerDevice(device) }

        let spent = Tally()
        let spendSeconds = time {
            runOnThreads(threads) { thread in
                for index in stride(from: thread, to: total, by: threads) {
                    do { if try store.spendChallenge(hash: challenge(index), now: now) { spent.win() } } catch { spent.fail(error) }
                }
            }
        }
        let advanced = Tally()
        let casSeconds = time {
            runOnThreads(threads) { thread in
                let device = devices[thread]
                for counter in 1...operationsPerThread {
                    do {
                        if try store.advanceCounter(deviceID: device.id, publicKey: device.publicKey, to: UInt32(counter), now: now) { advanced.win() }
                    } catch { advanced.fail(error) }
                }
            }
        }
        XCTAssertEqual(spent.errors + advanced.errors, [])
        XCTAssertEqual(spent.winCount, total)
        XCTAssertEqual(advanced.winCount, total)
        return (Double(total) / spendSeconds, Double(total) / casSeconds)
    }

    private func measureFigures(label: String, _ store: any Store) throws {
        let (spends, cas) = try Self.figures(store)
        print("\(label), \(Self.threads) threads: \(Int(spends)) challenge spends/s, \(Int(cas)) counter CAS/s")
    }

    private static func time(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
