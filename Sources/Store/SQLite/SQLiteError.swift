import CSQLite

extension StoreError {
    /// Maps an SQLite result code to a store error. The slug names the primary code; the detail
    /// carries SQLite's message, which names tables and constraints but never bound values.
    static func sqlite(_ code: Int32, _ db: OpaquePointer?, during action: String) -> StoreError {
        let reason: String
        switch code & 0xFF {
        case SQLITE_BUSY: reason = "sqlite_busy"
        case SQLITE_LOCKED: reason = "sqlite_locked"
        case SQLITE_FULL: reason = "sqlite_full"
        case SQLITE_IOERR: reason = "sqlite_io"
        case SQLITE_CORRUPT, SQLITE_NOTADB: reason = "sqlite_corrupt"
        case SQLITE_CANTOPEN: reason = "sqlite_open"
        case SQLITE_READONLY: reason = "sqlite_readonly"
        case SQLITE_CONSTRAINT: reason = "sqlite_constraint"
        case SQLITE_NOMEM: reason = "sqlite_nomem"
        default: reason = "sqlite_error"
        }
        var detail = action + ": " + String(cString: sqlite3_errstr(code))
        if let db, let message = sqlite3_errmsg(db) {
            detail += " (" + String(cString: message) + ")"
        }
        return StoreError(.unavailable, reason, detail: detail)
    }
}
