import Foundation

/// The store as the request path uses it: nothing here blocks the caller.
///
/// Operations run on the store executor (a bounded pool of threads, each with its own
/// connection) and rate decisions go to the backend's `RateAdmissions`: in memory with group
/// commit for SQLite, one statement per decision for PostgreSQL. Every answer arrives in a
/// completion exactly once, within `operationTimeoutMillis`, or as `store_timeout`.
public final class AsyncStore: Sendable {
    /// `[store]` settings of `keyward.toml`.
    public struct Configuration: Sendable, Equatable {
        /// Threads (and connections) running store operations at once; `pool_size`, default 4.
        public var poolSize: Int = 4
        /// Operations that may wait for a thread before new ones are refused (503); default 1024.
        public var queueCapacity: Int = 1_024
        /// Deadline of one operation from submission to answer, milliseconds; `operation_timeout_ms`,
        /// default 2000. Past it the request gets 503 `unavailable` with `Retry-After`.
        public var operationTimeoutMillis: Int = 2_000
        /// The defaults above.
        public init() {}
    }

    /// The store itself, for callers that are already off the event loops (the CLI, the purge timer).
    public let store: any Store
    /// The settings in force.
    public let configuration: Configuration
    let executor: StoreExecutor
    let watch: DeadlineWatch
    let metrics = StoreMetrics()
    /// Rate decisions.
    public let admissions: any RateAdmissions
    private let sqliteAdmissions: SQLiteAdmissions?

    /// Starts the executor's threads and the backend's admissions.
    /// - Parameter nowMillis: the clock now, unix ms (SQLite rebuilds its windows from what is
    ///   still counted at this time).
    /// - Throws: `sqlite_limits_locked` when another process already decides rate limits on the
    ///   same SQLite database; any error of reading the persisted admissions.
    public init(store: any Store, configuration: Configuration = Configuration(), nowMillis: Int64) throws(StoreError) {
        self.store = store
        self.configuration = configuration
        watch = DeadlineWatch(timeoutMillis: configuration.operationTimeoutMillis)
        executor = StoreExecutor(poolSize: configuration.poolSize, queueCapacity: configuration.queueCapacity, watch: watch)
        if let sqlite = store as? SQLiteStore {
            do {
                let admissions = try SQLiteAdmissions(store: sqlite, watch: watch, nowMillis: nowMillis)
                sqliteAdmissions = admissions
                self.admissions = admissions
            } catch {
                executor.stop()
                watch.stop()
                throw error
            }
        } else {
            sqliteAdmissions = nil
            admissions = ExecutorAdmissions(store: store, executor: executor)
        }
    }

    /// Runs every operation, rate decisions included (the store's own `consumeRate`), on the
    /// executor: for a store whose backend is not known here (a wrapper), or a process that must
    /// not take SQLite's limits lock (it then shares the sliding log with whoever decides).
    public init(executorFor store: any Store, configuration: Configuration = Configuration()) {
        self.store = store
        self.configuration = configuration
        watch = DeadlineWatch(timeoutMillis: configuration.operationTimeoutMillis)
        executor = StoreExecutor(poolSize: configuration.poolSize, queueCapacity: configuration.queueCapacity, watch: watch)
        sqliteAdmissions = nil
        admissions = ExecutorAdmissions(store: store, executor: executor)
    }

    deinit { shutdown() }

    /// Runs `operation` (a closure over the store, typically several calls) on a store thread;
    /// `completion` gets its result, `store_timeout` at the deadline or `store_queue_full` at once.
    /// - Parameters:
    ///   - name: the operation's name in the store metrics (a fixed word, e.g. `device_read`).
    ///   - undoLate: for an operation that changes something the caller acts on (a charge), what
    ///     takes it back when it went through after the deadline had answered `store_timeout`:
    ///     run on the store thread, with the store and the late result.
    public func run<T: Sendable>(
        _ name: String = "other",
        _ operation: @escaping @Sendable (any Store) throws(StoreError) -> T,
        undoLate: (@Sendable (any Store, T) -> Void)? = nil,
        completion: @escaping @Sendable (Result<T, StoreError>) -> Void
    ) {
        let store = self.store
        let metrics = self.metrics
        let began = DispatchTime.now().uptimeNanoseconds
        var undo: (@Sendable (T) -> Void)?
        if let undoLate { undo = { late in undoLate(store, late) } }
        executor.run({ () throws(StoreError) -> T in try operation(store) }, undoLate: undo, completion: { result in
            var timedOut = false
            if case .failure(let error) = result, error.reason == "store_timeout" { timedOut = true }
            metrics.observe(name, seconds: Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9, timedOut: timedOut)
            completion(result)
        })
    }

    /// Runs `operation`, which no caller waits on, to its end: never answered by the deadline,
    /// never dropped while it queues, never refused by a full queue (see
    /// `StoreExecutor.runUnattended`); `completion` gets its result on a store thread, or
    /// `store_stopped` once the store has shut down.
    /// - Parameter name: the operation's name in the store metrics.
    public func runUnattended<T: Sendable>(
        _ name: String,
        _ operation: @escaping @Sendable (any Store) throws(StoreError) -> T,
        completion: @escaping @Sendable (Result<T, StoreError>) -> Void
    ) {
        let store = self.store
        let metrics = self.metrics
        let began = DispatchTime.now().uptimeNanoseconds
        executor.runUnattended({ () throws(StoreError) -> T in try operation(store) }, completion: { result in
            metrics.observe(name, seconds: Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9, timedOut: false)
            completion(result)
        })
    }

    /// One rate decision; see `RateAdmissions.admit`. Timed as operation `admit`.
    public func admit(key: String, limits: [RateWindow], nowMillis: Int64, completion: @escaping @Sendable (Result<RateAdmission, StoreError>) -> Void) {
        let metrics = self.metrics
        let began = DispatchTime.now().uptimeNanoseconds
        admissions.admit(key: key, limits: limits, nowMillis: nowMillis) { result in
            var timedOut = false
            if case .failure(let error) = result, error.reason == "store_timeout" { timedOut = true }
            metrics.observe("admit", seconds: Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9, timedOut: timedOut)
            completion(result)
        }
    }

    /// The store families of `/metrics` (Prometheus text format): latency per operation, deadline
    /// answers, refusals of a full queue, queue depth, threads in use and pool size.
    public func renderMetrics() -> String {
        metrics.render(inUse: executor.inUse, poolSize: executor.poolSize, queueDepth: executor.queueDepth,
                       queueFull: executor.queueFullCount)
    }

    /// Drops in-memory windows that hold nothing any more (the minute sweep).
    public func purgeIdleWindows(nowMillis: Int64) { sqliteAdmissions?.purge(nowMillis: nowMillis) }

    /// Stops the threads (queued operations still run; later ones are refused) and releases
    /// SQLite's limits lock.
    public func shutdown() {
        sqliteAdmissions?.close()
        executor.stop()
        watch.stop()
    }
}
