import Foundation
import KeywardSupport
import Limits

/// SQLite's rate limits: decided in memory by `LimitsEngine` (O(1), no I/O on the caller's
/// thread), each admission made durable by the group-commit `AdmissionJournal` before `.allowed`
/// is answered. Refusals are answered at once and write nothing.
///
/// At start the engine is given every admission of `admissions` still inside its longest window,
/// so the windows survive restarts and crashes (an admission answered `.allowed` was committed).
/// Only one process may decide over a database: opening takes an exclusive `flock` on
/// `<database>.limits.lock` and fails with `sqlite_limits_locked` while another process holds it
/// (two engines over one file would each admit the full limit). `<database>` is the file's
/// resolved path (`realpath(3)`: symbolic links and `.`/`..` followed), so a second process
/// opening the database through a symbolic link or another spelling of the path meets the same
/// lock. A hard link to the database file is still a different name and escapes the lock: the
/// lock file would have to be keyed by device and inode to catch it.
final class SQLiteAdmissions: RateAdmissions, @unchecked Sendable {
    let engine: LimitsEngine
    let journal: AdmissionJournal
    private let watch: DeadlineWatch
    /// The lock file's descriptor, held open (and locked) until `close()`; -1 after.
    private let lockDescriptor: Locked<Int32>

    /// - Parameters:
    ///   - store: the open store (its path names the lock file and the journal's connection).
    ///   - watch: answers admissions whose commit takes longer than the operation deadline.
    ///   - nowMillis: the clock at start, to skip admissions that no longer count.
    init(store: SQLiteStore, watch: DeadlineWatch, nowMillis: Int64, engine: LimitsEngine = LimitsEngine()) throws(StoreError) {
        let lockPath = Self.lockPath(databasePath: store.path)
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreError(.unavailable, "sqlite_limits_lock", detail: "cannot open \(lockPath): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(descriptor)
            throw StoreError(.unavailable, "sqlite_limits_locked",
                             detail: "another process decides rate limits on this database (\(lockPath) is locked)")
        }
        lockDescriptor = Locked(descriptor)
        self.engine = engine
        self.watch = watch
        do {
            try Self.rebuild(engine, from: store, nowMillis: nowMillis)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        let (health, path) = (store.writeHealth, store.path)
        journal = AdmissionJournal(path: store.path, busyTimeoutMillis: store.busyTimeoutMillis, maxPageCount: store.maxPageCount,
                                   precheck: { () throws(StoreError) in try health.checkFile(path: path) },
                                   noteFailure: { health.note($0) })
    }

    deinit { close() }

    /// The limits lock's path: `<resolved database path>.limits.lock`. The store has created the
    /// database file by now, so `realpath(3)` resolves it; if it cannot (the file vanished), the
    /// path as given is used and opening the database's journal reports the fault.
    static func lockPath(databasePath: String) -> String {
        guard let resolved = realpath(databasePath, nil) else { return databasePath + ".limits.lock" }
        defer { free(resolved) }
        return String(cString: resolved) + ".limits.lock"
    }

    /// Stops the journal (what is queued still commits) and releases the limits lock, so another
    /// process may decide from now on. Idempotent.
    func close() {
        journal.stop()
        lockDescriptor.withLock { descriptor in
            if descriptor >= 0 { Glibc.close(descriptor) }   // closing releases the flock
            descriptor = -1
        }
    }

    /// Loads every admission still counted (`expires_ms > now`), per key in time order (one scan
    /// and sort of the table, at start only).
    static func rebuild(_ engine: LimitsEngine, from store: SQLiteStore, nowMillis: Int64) throws(StoreError) {
        try store.pool.withConnection { connection throws(StoreError) in
            try connection.with("SELECT key, at_ms FROM admissions WHERE expires_ms > ?1 ORDER BY key, at_ms") { statement throws(StoreError) in
                try statement.bind(1, nowMillis)
                var key: String?
                var times: [Int64] = []
                while try statement.step() {
                    let rowKey = statement.text(0)
                    if rowKey != key {
                        if let key { engine.preload(key: key, admissionTimes: times) }
                        key = rowKey
                        times = []
                    }
                    times.append(statement.int64(1))
                }
                if let key { engine.preload(key: key, admissionTimes: times) }
            }
        }
    }

    func admit(key: String, limits: [RateWindow], nowMillis: Int64, completion: @escaping @Sendable (Result<RateAdmission, StoreError>) -> Void) {
        do { try SlidingLog.validate(limits) } catch { return completion(.failure(error)) }
        guard !limits.isEmpty else { return completion(.success(RateAdmission(.allowed, usage: []))) }
        let rules = limits.map { LimitRule(limit: $0.limit, windowMillis: $0.durationMillis) }
        // Counted under the decision's lock: the answer's headers need no second look-up.
        let (decision, counted) = engine.admitCounting(key: key, rules: rules, nowMillis: nowMillis)
        let usage = zip(limits, counted).map { RateWindowUsage(window: $0, used: $1.used, resetMillis: $1.resetMillis) }
        switch decision {
        case .refused:
            return completion(.success(RateAdmission(.limited(retryAfterSeconds: decision.retryAfterSeconds ?? 1), usage: usage)))
        case .admitted:
            let ticket = watch.register {
                completion(.failure(StoreError(.unavailable, "store_timeout", detail: "admission not durable within the operation deadline")))
            }
            journal.append(AdmissionJournal.Entry(
                key: key, atMillis: nowMillis, expiresMillis: nowMillis &+ SlidingLog.retention(limits),
                done: { failure in
                    guard ticket.settle() else { return }
                    if let failure { completion(.failure(failure)) } else { completion(.success(RateAdmission(.allowed, usage: usage))) }
                }))
        }
    }

    /// The in-memory windows' counts (the engine's lock for the key, no I/O).
    func usage(key: String, limits: [RateWindow], nowMillis: Int64) -> [RateWindowUsage]? {
        let valid = limits.filter { $0.durationMillis > 0 && $0.limit >= 0 }
        let counted = engine.usage(key: key, rules: valid.map { LimitRule(limit: $0.limit, windowMillis: $0.durationMillis) }, nowMillis: nowMillis)
        return zip(valid, counted).map { RateWindowUsage(window: $0, used: $1.used, resetMillis: $1.resetMillis) }
    }

    /// Forgets keys with nothing left in their windows (call from the minute sweep).
    func purge(nowMillis: Int64) { engine.purge(nowMillis: nowMillis) }
}
