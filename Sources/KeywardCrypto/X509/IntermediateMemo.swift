import KeywardSupport

/// A bounded set of intermediate lists (each the exact DER of every intermediate, in order) that
/// have been verified up to the pinned root, so a repeat verification only checks the leaf.
///
/// Only what never changes is remembered (signatures and constraints between the intermediates
/// and the root); validity periods are checked again at every verification time. Entries are
/// added only after a full OpenSSL verification built exactly leaf ← these intermediates ← root.
/// When full, an arbitrary entry is dropped: every real App Attest chain shares one Apple
/// intermediate, so a handful of entries covers all traffic.
final class IntermediateMemo: Sendable {
    private let entries: Locked<Set<[[UInt8]]>>
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        entries = Locked([])
    }

    func contains(_ intermediates: [[UInt8]]) -> Bool {
        entries.withLock { $0.contains(intermediates) }
    }

    func insert(_ intermediates: [[UInt8]]) {
        guard capacity > 0 else { return }
        entries.withLock { set in
            if set.count >= capacity, !set.contains(intermediates), let any = set.first {
                set.remove(any)
            }
            set.insert(intermediates)
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
