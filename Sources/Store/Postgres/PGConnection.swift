import Foundation
import CPostgres

/// One libpq connection, used by one thread at a time (libpq connections are not thread-safe; the
/// pool guarantees exclusivity). Every statement is sent unnamed with its parameters
/// (`PQexecParams`): nothing prepared outlives the statement, so the connection works through a
/// transaction-pooling PgBouncer, where the next statement may run on another server connection.
/// Every parameter and result travels in binary format.
final class PGConnection {
    /// Server-side limits set on every connection at start-up, milliseconds (0 = none).
    struct Timeouts: Sendable, Equatable {
        /// A statement running longer fails (`statement_timeout`).
        var statementMillis = 15_000
        /// A statement waiting longer for a lock fails (`lock_timeout`): no decision queues behind
        /// a stuck holder.
        var lockMillis = 1_000
        /// A session idle inside a transaction longer is ended by the server, releasing its locks
        /// (`idle_in_transaction_session_timeout`): a paused or partitioned instance cannot hold
        /// others up.
        var idleInTransactionMillis = 5_000
        /// TCP keepalive idle time before probing a silent server, seconds (libpq `keepalives_idle`;
        /// probes every 5 s, 3 misses end the connection).
        var keepaliveIdleSeconds = 10
    }

    let handle: OpaquePointer

    /// Connects with `url` (a libpq URI or key=value string). A connect timeout placed before the URL
    /// applies unless the URL sets `connect_timeout` (libpq's default is to wait forever).
    ///
    /// The server-side timeouts travel in the start-up packet (libpq's `options`, `-c name=value`),
    /// so they hold from the connection's first statement without a session `SET`; TCP keepalives
    /// are libpq's own. Settings in the URL override both. A PgBouncer in front refuses an
    /// `options` start-up parameter unless told to ignore it (`ignore_startup_parameters = options`);
    /// the server connections behind it then take the timeouts from the role (`ALTER ROLE … SET`),
    /// and the rate decision sets its own lock timeout for its transaction alone.
    /// - Throws: `.unavailable` `pg_connect`, with libpq's first line of explanation; the password is
    ///   never part of it (redacted should libpq quote the URI).
    init(url: String, connectTimeoutSeconds: Int, timeouts: Timeouts? = Timeouts()) throws(StoreError) {
        var pairs = [
            ("connect_timeout", String(connectTimeoutSeconds)),
            ("application_name", "keyward"),
        ]
        if let timeouts {
            pairs += [
                ("options", "-c statement_timeout=\(max(0, timeouts.statementMillis)) -c lock_timeout=\(max(0, timeouts.lockMillis))"
                    + " -c idle_in_transaction_session_timeout=\(max(0, timeouts.idleInTransactionMillis))"),
                ("keepalives", "1"),
                ("keepalives_idle", String(max(1, timeouts.keepaliveIdleSeconds))),
                ("keepalives_interval", "5"),
                ("keepalives_count", "3"),
            ]
        }
        pairs.append(("dbname", url))   // expanded (expand_dbname = 1): its settings override the defaults above
        let connection = PGConnection.connect(pairs)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.flatMap { PQerrorMessage($0) }.map { String(cString: $0) } ?? "out of memory"
            PQfinish(connection)
            throw StoreError(.unavailable, "pg_connect", detail: PGConnection.redact(StoreError.firstLine(message), in: url))
        }
        handle = connection
        // Notices ("relation already exists, skipping") would go to stderr by default.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    deinit { PQfinish(handle) }

    /// Whether the pool may hand this connection out again: still connected and not left inside a
    /// transaction by an error.
    var isReusable: Bool { PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// Runs `sql` with its parameters as one unnamed statement (parse, bind and execute in one
    /// round trip; nothing stays prepared on the server).
    func query(_ sql: String, _ parameters: [PGValue] = []) throws(StoreError) -> PGResult {
        let types = parameters.map(\.oid)
        let encoded = parameters.map(\.binary)
        // One buffer for all parameter bytes (plus a byte so even an all-empty list has an address);
        // a NULL parameter is a nil pointer, an empty one a valid pointer with length 0.
        var buffer: [UInt8] = []
        var offsets: [Int] = []
        for value in encoded {
            offsets.append(buffer.count)
            buffer.append(contentsOf: value ?? [])
        }
        buffer.append(0)
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        let raw: OpaquePointer? = buffer.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars -> OpaquePointer? in
                let pointers: [UnsafePointer<CChar>?] = zip(encoded, offsets).map { value, offset in
                    value == nil ? nil : chars.baseAddress.map { UnsafePointer($0 + offset) }
                }
                return PQexecParams(handle, sql, Int32(parameters.count), types, pointers, lengths, formats, 1)
            }
        }
        return try checked(raw, during: "query")
    }

    /// Runs a script of one or more statements without parameters (BEGIN/COMMIT, migrations).
    @discardableResult
    func execute(_ script: String) throws(StoreError) -> PGResult {
        try checked(PQexec(handle, script), during: "exec")
    }

    /// A read-committed transaction, rolled back on any error.
    func transaction<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        try execute("BEGIN")
        let result: R
        do {
            result = try body()
            try execute("COMMIT")
        } catch {
            // A lost connection cannot roll back; the server aborts the transaction itself.
            _ = try? execute("ROLLBACK")
            throw error
        }
        return result
    }

    private func checked(_ raw: OpaquePointer?, during action: String) throws(StoreError) -> PGResult {
        guard let raw else { throw .postgres(handle, nil, during: action) }
        let result = PGResult(raw)
        let status = PQresultStatus(raw)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw .postgres(handle, raw, during: action)
        }
        return result
    }

    private static func connect(_ pairs: [(String, String)]) -> OpaquePointer? {
        // C strings that live for the duration of the call.
        let keys = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer { (keys + values).forEach { free($0) } }
        let keyPointers = keys.map { UnsafePointer($0) } + [nil]
        let valuePointers = values.map { UnsafePointer($0) } + [nil]
        return PQconnectdbParams(keyPointers, valuePointers, 1)
    }

    /// Replaces the URL's password, if any, wherever libpq's message repeats it.
    static func redact(_ message: String, in url: String) -> String {
        guard let scheme = url.range(of: "://") else { return message }
        let afterScheme = url[scheme.upperBound...]
        guard let at = afterScheme.firstIndex(of: "@") else { return message }
        let userInfo = afterScheme[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return message }
        let password = String(userInfo[userInfo.index(after: colon)...])
        guard !password.isEmpty else { return message }
        return message.replacingOccurrences(of: password, with: "***")
    }
}
