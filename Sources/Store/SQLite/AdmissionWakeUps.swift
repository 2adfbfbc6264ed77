import Foundation
import KeywardSupport

/// Batches the group-commit writer's wake-ups per event-loop turn: an admission queued while the
/// calling thread is inside ``deferred(_:)`` does not wake the writer at once; the end of the
/// turn wakes each writer that got admissions once. One turn's admissions thus go into one
/// transaction with one wake-up, instead of the first of them waking the writer for a
/// transaction of its own while the turn queues the rest.
///
/// Only the wake-up moves: the request still waits for its admission to be committed, and the
/// turn ends within the loop's iteration, so the delay is bounded by one turn's work.
public enum AdmissionWakeUps {
    /// Runs `body` (one turn of an event loop) with wake-ups deferred on this thread, then sends
    /// the ones owed. Nests: only the outermost call sends.
    public static func deferred(_ body: () -> Void) {
        let outermost = pthread_getspecific(deferringKey) == nil
        if outermost { pthread_setspecific(deferringKey, deferring) }
        body()
        guard outermost else { return }
        // A turn that queued no first admission (most turns without limits) takes no lock.
        let thisTurnOwes = UnsafeRawPointer(pthread_getspecific(deferringKey)) == owing
        pthread_setspecific(deferringKey, nil)
        guard thisTurnOwes else { return }
        for journal in owed.withLock({ table -> [AdmissionJournal] in
            let journals = Array(table.values)
            table.removeAll(keepingCapacity: true)
            return journals
        }) {
            journal.wakeWriter()
        }
    }

    /// Whether the calling thread is inside ``deferred(_:)``.
    static var isDeferring: Bool { pthread_getspecific(deferringKey) != nil }

    /// Notes that `journal` must be woken when the current turn ends (called inside it).
    static func owe(_ journal: AdmissionJournal) {
        owed.withLock { $0[ObjectIdentifier(journal)] = journal }
        pthread_setspecific(deferringKey, owing)
    }

    /// The thread's marker: inside a turn, and inside a turn that owes a wake-up.
    private static var deferring: UnsafeRawPointer? { UnsafeRawPointer(bitPattern: 1) }
    private static var owing: UnsafeRawPointer? { UnsafeRawPointer(bitPattern: 2) }

    /// Journals owed a wake-up, by identity (one per open SQLite store, usually one).
    private static let owed = Locked<[ObjectIdentifier: AdmissionJournal]>([:])

    private static let deferringKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()
}
