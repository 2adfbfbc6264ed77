import Store
import Synchronization

/// The unused parts of metered calls' holds, kept in memory per (scope, day) until one store
/// transaction gives them all back (``flush(_:)``): a metered call's settle then costs no store
/// write of its own.
///
/// Why budgets stay exact: a give-back only lowers a scope's `used`, and every entry here is a
/// part of a hold the store already counts. While an entry waits, the store's `used` is at least
/// the settled figure, so a spend decided against it can be refused early, never admitted past a
/// limit, on one instance or several sharing PostgreSQL. A process that dies before a flush loses
/// its pending give-backs: those calls stay charged their whole hold (an over-count, never an
/// under-count), as a failed release does.
///
/// Flushed every ``flushIntervalMillis`` by the server's timer (off the event loops), at stop, and
/// by every read that reports figures (`/v1/usage`) or a spend that would be refused.
final class GiveBackLedger: Sendable {
    /// How often the server's timer flushes, milliseconds: the most a store figure read by another
    /// process (`keyward devices usage`) lags the settled one.
    static let flushIntervalMillis = 1_000

    private struct Key: Hashable {
        let scope: String
        let day: Int64
    }

    private let pending = Mutex<[Key: Int]>([:])
    /// Held for a whole flush (on a store thread, never a loop): a reader that flushes first sees
    /// the store settled once its own flush returns, even when another flush was under way.
    private let flushing = Mutex<Void>(())

    /// Adds `credits` (≥ 1) given back to the device's budget of `day`, and to the app's when
    /// `countsTowardApp`.
    func add(deviceID: String, day: Int64, credits: Int, countsTowardApp: Bool) {
        guard credits > 0 else { return }
        let install = Key(scope: CreditSpend.installScope(deviceID), day: day)
        pending.withLock {
            $0[install, default: 0] += credits
            if countsTowardApp { $0[Key(scope: CreditSpend.appScope, day: day), default: 0] += credits }
        }
    }

    /// Credits waiting to be given back to `scope` on `day`.
    func pending(scope: String, day: Int64) -> Int {
        pending.withLock { $0[Key(scope: scope, day: day)] ?? 0 }
    }

    /// Whether anything waits for `scope` or the app on `day`.
    func hasPending(scope: String, day: Int64) -> Bool {
        pending.withLock { !$0.isEmpty && ($0[Key(scope: scope, day: day)] != nil || $0[Key(scope: CreditSpend.appScope, day: day)] != nil) }
    }

    /// Whether nothing waits.
    var isEmpty: Bool { pending.withLock { $0.isEmpty } }

    /// Gives every pending entry back in one store transaction; call on a store thread (or any
    /// thread but a loop's). The entries leave the ledger before the write, so a reader of the
    /// store during it can only see figures above the settled ones. A failed write keeps those
    /// credits spent (refusing early, never admitting past a limit) and is thrown.
    /// - Returns: the credits given back (all scopes).
    @discardableResult
    func flush(_ store: any Store) throws(StoreError) -> Int {
        try flushing.withLock { _ throws(StoreError) -> Int in
            let entries = pending.withLock { pending -> [Key: Int] in
                defer { pending.removeAll(keepingCapacity: true) }
                return pending
            }
            guard !entries.isEmpty else { return 0 }
            try store.giveBackCredits(entries.map { CreditGiveBack(scope: $0.key.scope, day: $0.key.day, credits: $0.value) })
            return entries.values.reduce(0, +)
        }
    }
}
