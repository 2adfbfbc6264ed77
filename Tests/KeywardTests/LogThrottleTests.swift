import Foundation
import Keyward
import XCTest

/// A line that repeats (a store failing every request) is written once, then at most once a second
/// per key with the count held back, by the logger's own clock.
final class LogThrottleTests: XCTestCase {
    func testTheFirstLineIsWrittenThenOneASecondCarryingTheCountHeldBack() throws {
        let time = ManualTimeSource(millis: 1_800_000_000_000)
        let sink = MemoryLogSink()
        let logger = Logger(sink: sink, time: time)
        for _ in 0..<5 { logger.emitThrottled("store_error", key: "rate_consume sqlite_full") { $0.add("operation", "rate_consume") } }
        XCTAssertEqual(sink.lines.count, 1)
        XCTAssertFalse(sink.lines[0].contains("suppressed"), sink.lines[0])
        time.advance(millis: 999)
        logger.emitThrottled("store_error", key: "rate_consume sqlite_full") { $0.add("operation", "rate_consume") }
        XCTAssertEqual(sink.lines.count, 1, "still inside the second")
        time.advance(millis: 1)
        logger.emitThrottled("store_error", key: "rate_consume sqlite_full") { $0.add("operation", "rate_consume") }
        XCTAssertEqual(sink.lines.count, 2)
        let second = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(sink.lines[1].utf8)) as? [String: Any])
        XCTAssertEqual(second["suppressed"] as? Int, 5, "four in the first burst and one at 999 ms")
        XCTAssertEqual(second["operation"] as? String, "rate_consume")
        // Nothing held back since: the next line a second later carries no count.
        time.advance(millis: 1_000)
        logger.emitThrottled("store_error", key: "rate_consume sqlite_full") { _ in }
        XCTAssertEqual(sink.lines.count, 3)
        XCTAssertFalse(sink.lines[2].contains("suppressed"), sink.lines[2])
    }

    func testEachKeyHasItsOwnAllowance() {
        let time = ManualTimeSource(millis: 1_800_000_000_000)
        let sink = MemoryLogSink()
        let logger = Logger(sink: sink, time: time)
        for key in ["rate_consume sqlite_full", "challenge_put sqlite_full", "rate_consume sqlite_io", "rate_consume sqlite_full"] {
            logger.emitThrottled("store_error", key: key) { $0.add("key", key) }
        }
        XCTAssertEqual(sink.lines.count, 3)
    }

    func testACopyOfTheLoggerSharesTheAllowance() {
        let time = ManualTimeSource(millis: 1_800_000_000_000)
        let sink = MemoryLogSink()
        let logger = Logger(sink: sink, time: time)
        let copy = logger
        logger.emitThrottled("store_error", key: "k") { _ in }
        copy.emitThrottled("store_error", key: "k") { _ in }
        XCTAssertEqual(sink.lines.count, 1)
    }

    func testAClockSetBackwardsDoesNotSilenceTheKey() {
        let time = ManualTimeSource(millis: 1_800_000_000_000)
        let sink = MemoryLogSink()
        let logger = Logger(sink: sink, time: time)
        logger.emitThrottled("store_error", key: "k") { _ in }
        time.set(millis: 1_700_000_000_000)
        logger.emitThrottled("store_error", key: "k") { _ in }
        XCTAssertEqual(sink.lines.count, 2)
    }
}
