import Foundation
import CPostgres

/// One libpq connection, used by one thread at a time (libpq connections are not thread-safe; the
/// pool guarantees exclusivity), with its prepared statements named by the order they were first
/// used. Every parameter and result travels in binary format.
final class PGConnection {
    let handle: OpaquePointer
    private var prepared: [String: String] = [:]

    /// Connects with `url` (a libpq URI or key=value string). A connect timeout placed before the URL
    /// applies unless the URL sets `connect_timeout` (libpq's default is to wait forever). The
    /// statement timeout, a backstop against a stuck lock, is a plain `SET` after connecting rather
    /// than the `options` startup parameter, which PgBouncer refuses.
    /// - Throws: `.unavailable` `pg_connect`, with libpq's first line of explanation; the password is
    ///   never part of it (redacted should libpq quote the URI).
    init(url: String, connectTimeoutSeconds: Int, statementTimeoutMillis: Int? = nil) throws(StoreError) {
        let pairs = [
            ("connect_timeout", String(connectTimeoutSeconds)),
            ("application_name", "keyward"),
            ("dbname", url),   // expanded (expand_dbname = 1): its settings override the defaults above
        ]
        let connection = PGConnection.connect(pairs)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.flatMap { PQerrorMessage($0) }.map { String(cString: $0) } ?? "out of memory"
            PQfinish(connection)
            throw StoreError(.unavailable, "pg_connect", detail: PGConnection.redact(StoreError.firstLine(message), in: url))
        }
        handle = connection
        // Notices ("relation already exists, skipping") would go to stderr by default.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        if let statementTimeoutMillis {
            try execute("SET statement_timeout = \(max(0, statementTimeoutMillis))")
        }
    }

    deinit { PQfinish(handle) }

    /// Whether the pool may hand this connection out again: still connected and not left inside a
    /// transaction by an error.
    var isReusable: Bool { PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// Runs `sql` as a prepared statement (prepared on first use on this connection).
    func query(_ sql: String, _ parameters: [PGValue] = []) throws(StoreError) -> PGResult {
        let name = try statementName(sql, parameters)
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
                return PQexecPrepared(handle, name, Int32(parameters.count), pointers, lengths, formats, 1)
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

    private func statementName(_ sql: String, _ parameters: [PGValue]) throws(StoreError) -> String {
        if let name = prepared[sql] { return name }
        let name = "k\(prepared.count)"
        let types = parameters.map(\.oid)
        let raw = PQprepare(handle, name, sql, Int32(types.count), types)
        _ = try checked(raw, during: "prepare")
        prepared[sql] = name
        return name
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
