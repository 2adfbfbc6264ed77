/// An object that can hold an entry in a ``DeadlineHeap``: at most one, in one heap at a time.
///
/// The member keeps its entry's position in the heap's array so the heap can move or remove the
/// entry without searching for it.
package protocol DeadlineHeapMember: AnyObject {
    /// The index of the member's entry in its heap's array, or -1 when it has none. Written only by
    /// ``DeadlineHeap``: a conforming type declares it as `var deadlineHeapSlot = -1` and leaves it be.
    var deadlineHeapSlot: Int { get set }
}

/// The deadlines of an event loop's connections or transfers, earliest first, so a loop pass costs
/// what the due entries cost, however many others are waiting.
///
/// A binary min-heap of (deadline, member) with at most one entry per member. Insertion, moving an
/// entry and removal cost O(log n); the earliest entry is read in O(1). Each member records its own
/// position (``DeadlineHeapMember/deadlineHeapSlot``), so removal needs no search.
///
/// How a loop uses it, so that a deadline that moves later (every byte of activity moves an idle
/// window) costs nothing at the time: the loop enters a member with ``schedule(_:noLaterThan:)``
/// whenever its deadline may have come nearer, and leaves a later-moving deadline alone. When the
/// entry comes due (``popEarliest(atOrBefore:)``) the loop asks the member for its deadline as it is
/// now: already passed → the member times out; later → it goes back in at that time; none → it
/// stays out until its deadline comes nearer again.
///
/// Times are whatever monotonic unit the caller uses (Keyward's loops: milliseconds). Members with
/// equal deadlines come out in no particular order. Not thread-safe: one loop thread owns a heap.
/// Noncopyable, since every member's slot refers to one array.
///
/// Members are held as `any DeadlineHeapMember`, not through a generic parameter: the heap is
/// compiled once here, and a generic one used from the loops' modules ran unspecialized (a type
/// metadata lookup per call: a third of the shard loops' CPU while 9,500 held streams idled). A loop gets its own
/// type back with `unsafeDowncast`, since it only ever enters members of that type.
package struct DeadlineHeap: ~Copyable {
    package typealias Member = any DeadlineHeapMember

    private struct Entry {
        var atTime: Int64
        let member: Member
    }

    private var entries: [Entry] = []

    /// An empty heap.
    package init() {}

    /// How many members have an entry.
    package var count: Int { entries.count }

    /// Whether no member has an entry.
    package var isEmpty: Bool { entries.isEmpty }

    /// The earliest entry's time and member, nil when the heap is empty. O(1).
    package var earliest: (atTime: Int64, member: Member)? {
        entries.first.map { ($0.atTime, $0.member) }
    }

    /// The time of `member`'s entry, nil when it has none in this heap.
    package func scheduledTime(of member: Member) -> Int64? {
        let slot = member.deadlineHeapSlot
        guard slot >= 0, slot < entries.count, entries[slot].member === member else { return nil }
        return entries[slot].atTime
    }

    /// Enters `member` at `atTime`, or moves its entry to `atTime`, earlier or later. O(log n).
    package mutating func schedule(_ member: Member, at atTime: Int64) {
        if let current = scheduledTime(of: member) {
            let slot = member.deadlineHeapSlot
            entries[slot].atTime = atTime
            if atTime < current { siftUp(from: slot) } else { siftDown(from: slot) }
            return
        }
        entries.append(Entry(atTime: atTime, member: member))
        member.deadlineHeapSlot = entries.count - 1
        siftUp(from: entries.count - 1)
    }

    /// Enters `member` at `atTime` if it has no entry, or moves its entry earlier to `atTime`; an
    /// entry already at or before `atTime` stays where it is (the loop re-reads the member's deadline
    /// when that entry comes due). O(1) when nothing moves, else O(log n).
    package mutating func schedule(_ member: Member, noLaterThan atTime: Int64) {
        if let current = scheduledTime(of: member), current <= atTime { return }
        schedule(member, at: atTime)
    }

    /// Takes `member`'s entry out, if it has one. O(log n).
    package mutating func remove(_ member: Member) {
        guard scheduledTime(of: member) != nil else { return }
        removeEntry(at: member.deadlineHeapSlot)
    }

    /// Takes out and returns the earliest entry if its time is at or before `limit`; nil otherwise
    /// (nothing is due). O(log n).
    package mutating func popEarliest(atOrBefore limit: Int64) -> (atTime: Int64, member: Member)? {
        guard let first = entries.first, first.atTime <= limit else { return nil }
        removeEntry(at: 0)
        return (first.atTime, first.member)
    }

    // MARK: Heap order

    private mutating func removeEntry(at slot: Int) {
        entries[slot].member.deadlineHeapSlot = -1
        let last = entries.count - 1
        if slot != last {
            entries.swapAt(slot, last)
            entries[slot].member.deadlineHeapSlot = slot
        }
        entries.removeLast()
        guard slot < entries.count else { return }
        siftUp(from: slot)
        siftDown(from: entries[slot].member.deadlineHeapSlot)
    }

    /// Moves the entry at `slot` towards the root while it is earlier than its parent.
    private mutating func siftUp(from slot: Int) {
        var child = slot
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].atTime < entries[parent].atTime else { break }
            swapEntries(child, parent)
            child = parent
        }
    }

    /// Moves the entry at `slot` towards the leaves while a child is earlier than it.
    private mutating func siftDown(from slot: Int) {
        var parent = slot
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            let right = left + 1
            let earlier = right < entries.count && entries[right].atTime < entries[left].atTime ? right : left
            guard entries[earlier].atTime < entries[parent].atTime else { return }
            swapEntries(parent, earlier)
            parent = earlier
        }
    }

    private mutating func swapEntries(_ a: Int, _ b: Int) {
        entries.swapAt(a, b)
        entries[a].member.deadlineHeapSlot = a
        entries[b].member.deadlineHeapSlot = b
    }
}
