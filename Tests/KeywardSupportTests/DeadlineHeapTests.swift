import XCTest
import KeywardSupport

final class DeadlineHeapTests: XCTestCase {
    final class Probe: DeadlineHeapMember {
        var deadlineHeapSlot = -1
        let name: String
        init(_ name: String) { self.name = name }
    }

    /// Pops every entry due at or before `limit`, in order, as (time, name).
    private func drain(_ heap: inout DeadlineHeap, atOrBefore limit: Int64 = .max) -> [(Int64, String)] {
        var popped: [(Int64, String)] = []
        while let entry = heap.popEarliest(atOrBefore: limit) { popped.append((entry.atTime, (entry.member as! Probe).name)) }
        return popped
    }

    func testEntriesComeOutEarliestFirst() {
        var heap = DeadlineHeap()
        let times: [Int64] = [50, 10, 40, 30, 20, 60, 0, 45]
        for (index, time) in times.enumerated() { heap.schedule(Probe("p\(index)"), at: time) }
        XCTAssertEqual(heap.count, 8)
        XCTAssertEqual(heap.earliest?.atTime, 0)
        XCTAssertEqual((heap.earliest?.member as? Probe)?.name, "p6")
        let popped = drain(&heap)
        XCTAssertEqual(popped.map(\.0), [0, 10, 20, 30, 40, 45, 50, 60])
        XCTAssertEqual(popped.map(\.1), ["p6", "p1", "p4", "p3", "p2", "p7", "p0", "p5"])
        XCTAssertTrue(heap.isEmpty)
        XCTAssertNil(heap.earliest)
    }

    func testOnlyEntriesAtOrBeforeTheLimitArePopped() {
        var heap = DeadlineHeap()
        heap.schedule(Probe("a"), at: 100)
        heap.schedule(Probe("b"), at: 101)
        XCTAssertNil(heap.popEarliest(atOrBefore: 99))
        XCTAssertEqual(drain(&heap, atOrBefore: 100).map(\.1), ["a"])
        XCTAssertEqual(heap.count, 1)
        XCTAssertEqual(heap.earliest?.atTime, 101)
    }

    func testRescheduleLaterMovesTheEntryBehindOthers() {
        var heap = DeadlineHeap()
        let a = Probe("a"), b = Probe("b"), c = Probe("c")
        heap.schedule(a, at: 10)
        heap.schedule(b, at: 20)
        heap.schedule(c, at: 30)
        heap.schedule(a, at: 25)
        XCTAssertEqual(heap.count, 3, "one entry per member")
        XCTAssertEqual(heap.scheduledTime(of: a), 25)
        XCTAssertEqual(drain(&heap).map(\.1), ["b", "a", "c"])
    }

    func testRescheduleEarlierMovesTheEntryAheadOfOthers() {
        var heap = DeadlineHeap()
        let a = Probe("a"), b = Probe("b"), c = Probe("c")
        heap.schedule(a, at: 10)
        heap.schedule(b, at: 20)
        heap.schedule(c, at: 30)
        heap.schedule(c, at: 5)
        XCTAssertEqual(heap.count, 3)
        XCTAssertEqual((heap.earliest?.member as? Probe)?.name, "c")
        XCTAssertEqual(drain(&heap).map(\.0), [5, 10, 20])
    }

    func testNoLaterThanMovesOnlyEarlier() {
        var heap = DeadlineHeap()
        let a = Probe("a"), b = Probe("b")
        heap.schedule(a, noLaterThan: 40)
        XCTAssertEqual(heap.scheduledTime(of: a), 40, "a member without an entry is entered")
        heap.schedule(a, noLaterThan: 90)
        XCTAssertEqual(heap.scheduledTime(of: a), 40, "a later time leaves the entry where it is")
        heap.schedule(b, at: 30)
        heap.schedule(a, noLaterThan: 20)
        XCTAssertEqual(heap.scheduledTime(of: a), 20, "an earlier time moves it")
        XCTAssertEqual(heap.count, 2)
        XCTAssertEqual(drain(&heap).map(\.1), ["a", "b"])
    }

    func testRemovalTakesOutOnlyThatMember() {
        var heap = DeadlineHeap()
        let probes = (0..<10).map { Probe("p\($0)") }
        for (index, probe) in probes.enumerated() { heap.schedule(probe, at: Int64(index * 10)) }
        heap.remove(probes[0])  // the root
        heap.remove(probes[9])  // the last slot
        heap.remove(probes[4])  // one in the middle
        heap.remove(probes[4])  // twice: nothing more happens
        XCTAssertEqual(heap.count, 7)
        XCTAssertNil(heap.scheduledTime(of: probes[4]))
        XCTAssertEqual(probes[4].deadlineHeapSlot, -1)
        XCTAssertEqual(drain(&heap).map(\.1), ["p1", "p2", "p3", "p5", "p6", "p7", "p8"])
    }

    func testAPoppedMemberCanBeScheduledAgain() {
        var heap = DeadlineHeap()
        let a = Probe("a")
        heap.schedule(a, at: 10)
        XCTAssertEqual((heap.popEarliest(atOrBefore: 10)?.member as? Probe)?.name, "a")
        XCTAssertNil(heap.scheduledTime(of: a))
        heap.schedule(a, noLaterThan: 70)
        XCTAssertEqual(heap.scheduledTime(of: a), 70)
        XCTAssertEqual(heap.count, 1)
    }

    func testManyEqualDeadlinesAllComeOutOnce() {
        var heap = DeadlineHeap()
        let probes = (0..<1000).map { Probe("p\($0)") }
        for probe in probes { heap.schedule(probe, at: 500) }
        heap.schedule(Probe("early"), at: 499)
        heap.schedule(Probe("late"), at: 501)
        let popped = drain(&heap, atOrBefore: 500)
        XCTAssertEqual(popped.first?.1, "early")
        XCTAssertEqual(popped.count, 1001)
        XCTAssertEqual(Set(popped.dropFirst().map(\.1)), Set(probes.map(\.name)), "each member exactly once")
        XCTAssertTrue(popped.dropFirst().allSatisfy { $0.0 == 500 })
        XCTAssertEqual((heap.earliest?.member as? Probe)?.name, "late")
    }

    /// A mixed run of schedules, moves and removals against a plain dictionary of the same deadlines.
    func testAgreesWithASortedReferenceUnderRandomChanges() {
        var generator = SplitMix(seed: 0x5eed)
        var heap = DeadlineHeap()
        let probes = (0..<200).map { Probe("p\($0)") }
        var reference: [String: Int64] = [:]
        for _ in 0..<5000 {
            let probe = probes[Int(generator.next() % UInt64(probes.count))]
            let time = Int64(generator.next() % 1000)
            switch generator.next() % 4 {
            case 0:
                heap.remove(probe)
                reference[probe.name] = nil
            case 1:
                heap.schedule(probe, noLaterThan: time)
                reference[probe.name] = min(reference[probe.name] ?? .max, time)
            default:
                heap.schedule(probe, at: time)
                reference[probe.name] = time
            }
            XCTAssertEqual(heap.count, reference.count)
            XCTAssertEqual(heap.earliest?.atTime, reference.values.min())
        }
        let popped = drain(&heap)
        XCTAssertEqual(popped.map(\.0), reference.values.sorted())
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: popped.map { ($0.1, $0.0) }), reference)
    }
}

/// A small deterministic generator (SplitMix64), so the random test replays identically.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
