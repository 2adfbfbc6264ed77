import CSQLite

/// One prepared statement of one connection, kept for the connection's life and reused
/// (`SQLITE_PREPARE_PERSISTENT`). Bind with 1-based indexes, step, read 0-based columns; the owning
/// connection resets it after every use.
final class SQLiteStatement {
    let handle: OpaquePointer
    private let db: OpaquePointer

    /// SQLite copies bound values (`SQLITE_TRANSIENT`, the destructor −1), so no Swift buffer has to
    /// outlive the bind call.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(db: OpaquePointer, sql: String) throws(StoreError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw .sqlite(code, db, during: "prepare")
        }
        self.db = db
        self.handle = statement
    }

    deinit { sqlite3_finalize(handle) }

    func bind(_ index: Int32, _ value: Int64) throws(StoreError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    func bind(_ index: Int32, _ value: Int64?) throws(StoreError) {
        guard let value else { return try check(sqlite3_bind_null(handle, index)) }
        try bind(index, value)
    }

    /// A BLOB; an empty array binds a zero-length blob, not NULL.
    func bind(_ index: Int32, _ bytes: [UInt8]) throws(StoreError) {
        guard !bytes.isEmpty else { return try check(sqlite3_bind_zeroblob(handle, index, 0)) }
        let code = bytes.withUnsafeBytes { raw in
            sqlite3_bind_blob(handle, index, raw.baseAddress, Int32(raw.count), SQLiteStatement.transient)
        }
        try check(code)
    }

    /// TEXT, by its UTF-8 bytes and length (an embedded NUL does not truncate it).
    func bind(_ index: Int32, _ text: String) throws(StoreError) {
        // A nil pointer would bind NULL: the empty string gets a real (empty) C string.
        guard !text.isEmpty else { return try check(sqlite3_bind_text(handle, index, "", 0, SQLiteStatement.transient)) }
        var text = text
        let code = text.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { chars in
                sqlite3_bind_text(handle, index, chars.baseAddress, Int32(chars.count), SQLiteStatement.transient)
            }
        }
        try check(code)
    }

    /// Advances one row: true with a row to read, false when done.
    func step() throws(StoreError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw .sqlite(code, db, during: "step")
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws(StoreError) {
        while try step() {}
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func optionalInt64(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : int64(column)
    }

    func bytes(_ column: Int32) -> [UInt8] {
        // Pointer first, then the length (SQLite's documented order).
        guard let pointer = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Ready for the next use: rewound, bindings cleared.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    private func check(_ code: Int32) throws(StoreError) {
        guard code == SQLITE_OK else { throw .sqlite(code, db, during: "bind") }
    }
}
