import Foundation
import KeywardSupport
import Synchronization

/// Makes admissions durable with group commit: one writer thread with its own connection takes
/// every admission queued since its last transaction and inserts them all in one `BEGIN
/// IMMEDIATE` transaction, then tells each waiter. Callers never wait; the commit is off every
/// event loop, and many requests share one transaction (and its WAL append).
///
/// The writer never checkpoints the WAL itself (`wal_autocheckpoint = 0` on its connection): a
/// checkpoint copies pages into the database file and syncs it, which would hold every waiting
/// request for as long. A second thread with its own connection runs a passive checkpoint (which
/// never blocks the writer) after commits, at most every `checkpointIntervalMillis`.
///
/// A connection that failed with `SQLITE_READONLY` (or any error leaving it unsure) is closed
/// and a new one opened for the next batch, so a store whose files became writable again heals
/// by itself. Every failed commit or checkpoint is handed to `noteFailure`, so a storage failure
/// here (`sqlite_full`, `sqlite_io`, ...) makes the store not ready as one on any other write does.
final class AdmissionJournal: @unchecked Sendable {
    struct Entry {
        let key: String
        let atMillis: Int64
        let expiresMillis: Int64
        let done: @Sendable (StoreError?) -> Void
    }

    /// The most admissions in one transaction.
    static let batchLimit = 4_096
    /// The least time between two checkpoints, milliseconds.
    static let checkpointIntervalMillis = 500

    private let path: String
    private let busyTimeoutMillis: Int32
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var pending: [Entry] = []
    private var stopped = false
    /// The checkpointer's own lock (a signal meant for the writer must never wake it instead).
    private let checkpointCondition = NSCondition()
    // Guarded by `checkpointCondition`: commits since the last checkpoint, and stop.
    private var uncheckpointed = false
    private var checkpointerStopped = false
    // Used only by the writer thread.
    private var connection: SQLiteConnection?
    /// Transactions committed so far (for tests: how admissions were grouped).
    let committedBatches = Atomic<Int>(0)
    /// True while the writer waits for admissions (for tests: nothing it picks up by itself).
    let writerIsIdle = Atomic<Bool>(false)

    /// Run before each transaction; what it throws fails the batch (the database file must still
    /// be the one the store opened: an admission committed to a deleted file is forgotten at the
    /// next start).
    private let precheck: () throws(StoreError) -> Void
    /// Told of every failed commit and checkpoint, on the thread that met it.
    private let noteFailure: @Sendable (StoreError) -> Void
    /// `PRAGMA max_page_count` for this journal's connections (the store's cap), nil for none.
    private let maxPageCount: Int?

    /// - Parameters:
    ///   - path: the database file.
    ///   - busyTimeoutMillis: the write-lock wait of each connection, milliseconds.
    ///   - maxPageCount: the database's size cap in pages, as the store's own connections have it.
    ///   - precheck: run before each transaction (see `precheck`).
    ///   - noteFailure: told of each failed commit or checkpoint (the store's write health).
    init(path: String, busyTimeoutMillis: Int32, maxPageCount: Int? = nil,
         precheck: @escaping () throws(StoreError) -> Void = {},
         noteFailure: @escaping @Sendable (StoreError) -> Void = { _ in }) {
        self.path = path
        self.busyTimeoutMillis = busyTimeoutMillis
        self.maxPageCount = maxPageCount
        self.precheck = precheck
        self.noteFailure = noteFailure
        let thread = Thread { [self] in
            nameCurrentThread("kw-admissions")
            run()
        }
        thread.start()
        let checkpointer = Thread { [self] in
            nameCurrentThread("kw-checkpoint")
            checkpoint()
        }
        checkpointer.start()
    }

    /// Queues one admission; `done` runs on the writer thread once it committed (nil) or failed.
    func append(_ entry: Entry) {
        condition.lock()
        if stopped {
            condition.unlock()
            entry.done(StoreError(.unavailable, "store_stopped"))
            return
        }
        pending.append(entry)
        // The first admission since the writer took its batch wakes it, at once or, inside an
        // event-loop turn, when the turn ends (``AdmissionWakeUps``).
        let first = pending.count == 1
        let deferring = first && AdmissionWakeUps.isDeferring
        if first && !deferring { condition.signal() }
        condition.unlock()
        if deferring { AdmissionWakeUps.owe(self) }
    }

    /// Wakes the writer if admissions are waiting (the end of a turn that deferred the wake-up).
    func wakeWriter() {
        condition.lock()
        if !pending.isEmpty { condition.signal() }
        condition.unlock()
    }

    /// Commits what is queued, then stops the writer.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
        checkpointCondition.lock()
        checkpointerStopped = true
        checkpointCondition.signal()
        checkpointCondition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while pending.isEmpty && !stopped {
                writerIsIdle.store(true, ordering: .relaxed)
                condition.wait()
                writerIsIdle.store(false, ordering: .relaxed)
            }
            if pending.isEmpty {
                condition.unlock()
                connection = nil
                return
            }
            let batch = Array(pending.prefix(Self.batchLimit))
            pending.removeFirst(batch.count)
            condition.unlock()
            let failure = commit(batch)
            if failure == nil { committedBatches.add(1, ordering: .relaxed) }
            for entry in batch { entry.done(failure) }
            if failure == nil {
                checkpointCondition.lock()
                uncheckpointed = true
                checkpointCondition.unlock()
            }
        }
    }

    /// The checkpointer: a passive checkpoint on its own connection whenever commits happened
    /// since the last one, at most every `checkpointIntervalMillis`.
    private func checkpoint() {
        var connection: SQLiteConnection?
        while true {
            checkpointCondition.lock()
            if !checkpointerStopped {
                _ = checkpointCondition.wait(until: Date(timeIntervalSinceNow: Double(Self.checkpointIntervalMillis) / 1000))
            }
            let (due, done) = (uncheckpointed, checkpointerStopped)
            uncheckpointed = false
            checkpointCondition.unlock()
            if done { return }
            guard due else { continue }
            do throws(StoreError) {
                if connection == nil { connection = try openConnection() }
                try connection?.execute("PRAGMA wal_checkpoint(PASSIVE)")
            } catch {
                connection = nil   // retried at the next commit
                noteFailure(error)
            }
        }
    }

    private func commit(_ batch: [Entry]) -> StoreError? {
        do throws(StoreError) {
            try precheck()
            let connection: SQLiteConnection
            if let open = self.connection {
                connection = open
            } else {
                connection = try openConnection()
                try connection.execute("PRAGMA wal_autocheckpoint = 0")
                self.connection = connection
            }
            try connection.immediateTransaction { () throws(StoreError) in
                for entry in batch {
                    try connection.with("INSERT INTO admissions (key, at_ms, expires_ms) VALUES (?1, ?2, ?3)") { statement throws(StoreError) in
                        try statement.bind(1, entry.key)
                        try statement.bind(2, entry.atMillis)
                        try statement.bind(3, entry.expiresMillis)
                        try statement.run()
                    }
                }
            }
            return nil
        } catch {
            // Busy (another process held the lock past the timeout) leaves the connection sound;
            // anything else (read-only, I/O) gets a fresh connection next time.
            if error.reason != "sqlite_busy" { connection = nil }
            noteFailure(error)
            return error
        }
    }

    /// A new connection to the database, with the store's page cap.
    private func openConnection() throws(StoreError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, busyTimeoutMillis: busyTimeoutMillis)
        if let maxPageCount { try connection.execute("PRAGMA max_page_count = \(maxPageCount)") }
        return connection
    }
}
