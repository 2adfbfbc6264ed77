import Foundation

/// A small blocking pool of database connections, each used by one thread at a time.
///
/// Both C libraries want exactly that: SQLite connections are opened `SQLITE_OPEN_NOMUTEX`, libpq
/// connections are not thread-safe. The pool opens connections lazily up to `capacity`, hands each
/// to one caller for the length of a closure, and drops those the caller's error left unusable
/// (a lost PostgreSQL connection) so the next caller gets a fresh one.
///
/// `@unchecked Sendable`: the mutable state (`idle`, `open`) is only touched under `condition`, and
/// a connection is reachable from exactly one thread between checkout and checkin.
final class ConnectionPool<Connection: AnyObject>: @unchecked Sendable {
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var openCount = 0
    private let capacity: Int
    private let waitSeconds: Double
    private let connect: () throws(StoreError) -> Connection
    private let isReusable: (Connection, StoreError) -> Bool
    private let precheck: () throws(StoreError) -> Void

    /// - Parameters:
    ///   - capacity: most connections open at once (≥ 1).
    ///   - waitSeconds: how long a caller waits for a free connection before `pool_timeout`.
    ///   - connect: opens one connection (called without the pool's lock held).
    ///   - isReusable: after a closure failed with the error, whether the connection may go back
    ///     to the pool (else it is closed and the next caller gets a fresh one).
    ///   - precheck: runs before every use; what it throws fails the use (SQLite: the database
    ///     file must still be the one opened, or every write would go to a deleted file).
    init(
        capacity: Int, waitSeconds: Double,
        connect: @escaping () throws(StoreError) -> Connection,
        isReusable: @escaping (Connection, StoreError) -> Bool = { _, _ in true },
        precheck: @escaping () throws(StoreError) -> Void = {}
    ) {
        self.capacity = max(1, capacity)
        self.waitSeconds = waitSeconds
        self.connect = connect
        self.isReusable = isReusable
        self.precheck = precheck
    }

    /// Runs `body` with a connection of its own. The connection must not escape the closure.
    /// - Throws: what `precheck` throws, `pool_timeout`, or what `body` throws.
    func withConnection<R>(_ body: (Connection) throws(StoreError) -> R) throws(StoreError) -> R {
        try precheck()
        let connection = try checkout()
        let result: R
        do {
            result = try body(connection)
        } catch {
            checkin(connection, reusable: isReusable(connection, error))
            throw error
        }
        checkin(connection, reusable: true)
        return result
    }

    private func checkout() throws(StoreError) -> Connection {
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: waitSeconds)
        while true {
            if let connection = idle.popLast() {
                condition.unlock()
                return connection
            }
            if openCount < capacity {
                openCount += 1
                condition.unlock()
                do {
                    return try connect()
                } catch {
                    condition.lock()
                    openCount -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            guard condition.wait(until: deadline) else {
                condition.unlock()
                throw StoreError(.unavailable, "pool_timeout", detail: "no free connection within \(waitSeconds) s")
            }
        }
    }

    private func checkin(_ connection: Connection, reusable: Bool) {
        condition.lock()
        if reusable {
            idle.append(connection)
        } else {
            openCount -= 1   // dropped: its deinit closes it
        }
        condition.signal()
        condition.unlock()
    }
}
