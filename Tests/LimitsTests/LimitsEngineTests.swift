import Foundation
import XCTest
@testable import Limits
import KeywardSupport

final class LimitsEngineTests: XCTestCase {
    let start: Int64 = 1_800_000_000_000
    let perMinute5 = LimitRule(limit: 5, windowMillis: 60_000)

    func testFiveAtTheEndOfAWindowAndFiveAfterItsBoundaryAdmitOnlyFive() {
        let engine = LimitsEngine()
        for _ in 0..<5 { XCTAssertEqual(engine.admit(key: "k", rules: [perMinute5], nowMillis: start + 59_500), .admitted) }
        for _ in 0..<5 {
            XCTAssertEqual(engine.admit(key: "k", rules: [perMinute5], nowMillis: start + 60_500), .refused(retryAfterMillis: 59_000))
        }
        XCTAssertEqual(engine.admit(key: "k", rules: [perMinute5], nowMillis: start + 119_499), .refused(retryAfterMillis: 1))
        XCTAssertEqual(engine.admit(key: "k", rules: [perMinute5], nowMillis: start + 119_500), .admitted)
        XCTAssertEqual(engine.admit(key: "other", rules: [perMinute5], nowMillis: start + 60_500), .admitted, "keys are independent")
    }

    func testTheSameBoundaryHoldsOnTheBucketedWindow() {
        // Ring limit 0: every rule is bucketed.
        let engine = LimitsEngine(ringLimit: 0, bucketsPerWindow: 60)
        for _ in 0..<5 { XCTAssertEqual(engine.admit(key: "k", rules: [perMinute5], nowMillis: start + 59_500), .admitted) }
        for _ in 0..<5 {
            guard case .refused(let wait) = engine.admit(key: "k", rules: [perMinute5], nowMillis: start + 60_500) else {
                return XCTFail("admitted a sixth in one minute")
            }
            // Exact wait 59 s; bucketed it may be up to one bucket (1 s) longer.
            XCTAssertTrue((59_000...60_000).contains(wait), "wait \(wait)")
        }
        XCTAssertEqual(engine.admit(key: "k", rules: [perMinute5], nowMillis: start + 121_000), .admitted)
    }

    func testAnEventExactlyOneWindowOldNoLongerCounts() {
        let engine = LimitsEngine()
        let rule = LimitRule(limit: 1, windowMillis: 1_000)
        XCTAssertEqual(engine.admit(key: "k", rules: [rule], nowMillis: start), .admitted)
        XCTAssertEqual(engine.admit(key: "k", rules: [rule], nowMillis: start + 999), .refused(retryAfterMillis: 1))
        XCTAssertEqual(engine.admit(key: "k", rules: [rule], nowMillis: start + 1_000), .admitted)
    }

    func testEveryRuleMustHaveRoomAndTheLongestWaitWins() {
        let engine = LimitsEngine()
        let rules = [LimitRule(limit: 2, windowMillis: 60_000), LimitRule(limit: 3, windowMillis: 86_400_000)]
        XCTAssertEqual(engine.admit(key: "k", rules: rules, nowMillis: start), .admitted)
        XCTAssertEqual(engine.admit(key: "k", rules: rules, nowMillis: start + 10_000), .admitted)
        XCTAssertEqual(engine.admit(key: "k", rules: rules, nowMillis: start + 20_000), .refused(retryAfterMillis: 40_000))
        XCTAssertEqual(engine.admit(key: "k", rules: rules, nowMillis: start + 60_000), .admitted)
        // The day is full: its oldest admission (at start) leaves after 24 h.
        XCTAssertEqual(engine.admit(key: "k", rules: rules, nowMillis: start + 70_000),
                       .refused(retryAfterMillis: 86_400_000 - 70_000))
        XCTAssertEqual(LimitDecision.refused(retryAfterMillis: 1).retryAfterSeconds, 1)
        XCTAssertEqual(LimitDecision.refused(retryAfterMillis: 86_330_000).retryAfterSeconds, 86_330)
        XCTAssertNil(LimitDecision.admitted.retryAfterSeconds)
    }

    func testZeroLimitRefusesForAWindowAndNoRulesAdmit() {
        let engine = LimitsEngine()
        XCTAssertEqual(engine.admit(key: "k", rules: [LimitRule(limit: 0, windowMillis: 60_000)], nowMillis: start),
                       .refused(retryAfterMillis: 60_000))
        XCTAssertEqual(engine.admit(key: "k", rules: [], nowMillis: start), .admitted)
        XCTAssertEqual(engine.admit(key: "k", rules: [LimitRule(limit: 1, windowMillis: 0)], nowMillis: start),
                       .refused(retryAfterMillis: 1), "an invalid rule never admits")
        XCTAssertEqual(engine.keyCount, 1)
    }

    /// Exactness against a brute-force count of every trailing window, for both structures, over
    /// a pseudo-random arrival pattern with bursts and gaps.
    func testNoTrailingWindowEverHoldsMoreThanTheLimit() {
        for (ringLimit, limit) in [(256, 7), (0, 7), (0, 300), (256, 200)] {
            let engine = LimitsEngine(ringLimit: ringLimit, bucketsPerWindow: 50)
            let rule = LimitRule(limit: limit, windowMillis: 10_000)
            var generator = SplitMix(seed: UInt64(limit * 31 + ringLimit))
            var now = start
            var admitted: [Int64] = []
            var refusedWithRoom = 0
            for _ in 0..<20_000 {
                now += Int64(generator.next() % 100 == 0 ? generator.next() % 8_000 : generator.next() % Int64(25))
                let inWindow = admitted.reversed().prefix { $0 > now - rule.windowMillis }.count
                switch engine.admit(key: "k", rules: [rule], nowMillis: now) {
                case .admitted:
                    admitted.append(now)
                    XCTAssertLessThan(inWindow, limit, "admitted over the limit (ring limit \(ringLimit), N \(limit))")
                case .refused:
                    if inWindow < limit {
                        refusedWithRoom += 1
                        // Early refusal only within one bucket (T / K) of the window.
                        let widened = admitted.reversed().prefix { $0 > now - rule.windowMillis - rule.windowMillis / 50 }.count
                        XCTAssertGreaterThanOrEqual(widened, limit, "refused beyond the stated bound")
                    }
                }
            }
            if ringLimit >= limit { XCTAssertEqual(refusedWithRoom, 0, "the ring is exact") }
            XCTAssertGreaterThan(admitted.count, limit)
        }
    }

    /// The bucketed window's usage against a model that keeps every admission: the count is the
    /// admissions in the buckets still counted, the reset is when the oldest of those buckets
    /// leaves. Random bursts and idle gaps, so the oldest counted bucket moves by small steps and
    /// by whole windows.
    func testBucketedUsageMatchesAModelOfEveryAdmission() {
        let buckets = 50
        let rule = LimitRule(limit: 1_000, windowMillis: 10_000)
        let engine = LimitsEngine(ringLimit: 0, bucketsPerWindow: buckets)
        let width = rule.windowMillis / Int64(buckets)
        let span = Int64(buckets)
        var generator = SplitMix(seed: 7)
        var now = start
        var admittedBuckets: [Int64] = []
        var nonZeroResets = 0
        for step in 0..<5_000 {
            now += Int64(generator.next() % 50 == 0 ? generator.next() % 15_000 : generator.next() % 40)
            if generator.next() % 3 != 0, engine.admit(key: "k", rules: [rule], nowMillis: now) == .admitted {
                admittedBuckets.append(now / width)
            }
            let b = now / width
            let counted = admittedBuckets.filter { $0 >= b - span }
            let expectedReset = counted.min().map { ($0 + span + 1) * width - now } ?? 0
            let usage = engine.usage(key: "k", rules: [rule], nowMillis: now)
            XCTAssertEqual(usage.first?.used, counted.count, "used at step \(step)")
            XCTAssertEqual(usage.first?.resetMillis, expectedReset, "reset at step \(step)")
            if expectedReset > 0 { nonZeroResets += 1 }
        }
        XCTAssertGreaterThan(nonZeroResets, 1_000, "the model must see counted windows")
        XCTAssertGreaterThan(admittedBuckets.count, 1_000)
    }

    func testACountedAdmissionDecidesAsAdmitAndAnswersWhatUsageReadsAfter() {
        // Two engines fed the same requests: one decides with admitCounting, the other with admit
        // and then reads usage. Both rules kinds: a ring (5 per minute) and buckets (1,000 per day,
        // ring limit 256).
        let counting = LimitsEngine()
        let plain = LimitsEngine()
        let rules = [perMinute5, LimitRule(limit: 1_000, windowMillis: 86_400_000)]
        var now = start
        var generator = SplitMix(seed: 11)
        var admitted = 0
        for step in 0..<400 {
            now += Int64(generator.next() % 9_001)
            let (decision, usage) = counting.admitCounting(key: "k", rules: rules, nowMillis: now)
            XCTAssertEqual(decision, plain.admit(key: "k", rules: rules, nowMillis: now), "step \(step)")
            XCTAssertEqual(usage, plain.usage(key: "k", rules: rules, nowMillis: now), "step \(step)")
            XCTAssertLessThanOrEqual(usage.first?.used ?? 99, 5)
            if decision == .admitted { admitted += 1 }
        }
        XCTAssertTrue((1..<400).contains(admitted), "both admissions and refusals were compared (\(admitted) admitted)")
        XCTAssertEqual(counting.admitCounting(key: "k", rules: [], nowMillis: now).usage, [])
        let invalid = counting.admitCounting(key: "k", rules: [LimitRule(limit: 1, windowMillis: 0)], nowMillis: now)
        XCTAssertEqual(invalid.decision, .refused(retryAfterMillis: 1))
        XCTAssertEqual(invalid.usage, [])
    }

    func testRestoredAdmissionsCountAsBefore() {
        let engine = LimitsEngine()
        let rules = [LimitRule(limit: 3, windowMillis: 86_400_000)]
        for step in 0..<3 { engine.restore(key: "k", rules: rules, atMillis: start + Int64(step) * 1_000) }
        XCTAssertEqual(engine.admit(key: "k", rules: rules, nowMillis: start + 3_600_000),
                       .refused(retryAfterMillis: 86_400_000 - 3_600_000))
    }

    func testPreloadedTimesCountUnderTheRulesTheKeyFirstMeets() {
        let engine = LimitsEngine()
        engine.preload(key: "k", admissionTimes: [start, start + 1_000, start + 2_000])
        let rules = [LimitRule(limit: 3, windowMillis: 86_400_000), LimitRule(limit: 2, windowMillis: 60_000)]
        XCTAssertEqual(engine.admit(key: "k", rules: rules, nowMillis: start + 3_000), .refused(retryAfterMillis: 86_397_000))
        engine.preload(key: "j", admissionTimes: [start])
        XCTAssertEqual(engine.admit(key: "j", rules: [LimitRule(limit: 2, windowMillis: 60_000)], nowMillis: start + 1), .admitted)
        XCTAssertEqual(engine.admit(key: "j", rules: [LimitRule(limit: 2, windowMillis: 60_000)], nowMillis: start + 2),
                       .refused(retryAfterMillis: 59_998))
    }

    func testPurgeForgetsOnlyKeysWithNothingLeftInTheirWindows() {
        let engine = LimitsEngine()
        XCTAssertEqual(engine.admit(key: "old", rules: [perMinute5], nowMillis: start), .admitted)
        XCTAssertEqual(engine.admit(key: "new", rules: [perMinute5], nowMillis: start + 30_000), .admitted)
        XCTAssertEqual(engine.purge(nowMillis: start + 60_000), 1)
        XCTAssertEqual(engine.keyCount, 1)
        XCTAssertEqual(engine.purge(nowMillis: start + 90_000), 1)
        XCTAssertEqual(engine.keyCount, 0)
    }

    func testAClockSteppingBackCannotWidenTheWindow() {
        let engine = LimitsEngine()
        let rule = LimitRule(limit: 2, windowMillis: 60_000)
        XCTAssertEqual(engine.admit(key: "k", rules: [rule], nowMillis: start + 50_000), .admitted)
        XCTAssertEqual(engine.admit(key: "k", rules: [rule], nowMillis: start), .admitted)
        if case .admitted = engine.admit(key: "k", rules: [rule], nowMillis: start + 100_000) {
            XCTFail("the admission under the stepped-back clock counted as older than it was")
        }
    }

    func testConcurrentCallersOnManyThreadsGetExactlyTheLimit() {
        let engine = LimitsEngine(stripes: 4)
        let admitted = Locked(0)
        let now = start
        DispatchQueue.concurrentPerform(iterations: 400) { index in
            // Two keys share each stripe's lock; only "shared" is contended.
            if engine.admit(key: "shared", rules: [LimitRule(limit: 50, windowMillis: 60_000)], nowMillis: now) == .admitted {
                admitted.withLock { $0 += 1 }
            }
            _ = engine.admit(key: "other\(index % 8)", rules: [LimitRule(limit: 1_000, windowMillis: 60_000)], nowMillis: now)
        }
        XCTAssertEqual(admitted.withLock { $0 }, 50)
        XCTAssertEqual(engine.keyCount, 9)
    }
}

/// A small deterministic generator (SplitMix64), so the arrival pattern is the same on every run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> Int64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int64(bitPattern: (z ^ (z >> 31)) >> 1)
    }
}
