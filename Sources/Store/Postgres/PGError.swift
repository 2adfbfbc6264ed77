import CPostgres

extension StoreError {
    /// Maps a failed result (or a failed connection when `result` is nil) to a store error: the slug
    /// comes from the SQLSTATE class, the detail is the SQLSTATE and PostgreSQL's primary message
    /// (never the DETAIL field, which can quote row values).
    static func postgres(_ connection: OpaquePointer?, _ result: OpaquePointer?, during action: String) -> StoreError {
        guard let result, let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map({ String(cString: $0) }) else {
            let message = connection.flatMap { PQerrorMessage($0) }.map { String(cString: $0) } ?? ""
            let lost = connection.map { PQstatus($0) != CONNECTION_OK } ?? true
            return StoreError(.unavailable, lost ? "pg_connection" : "pg_error", detail: action + ": " + firstLine(message))
        }
        let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) } ?? ""
        let reason: String
        switch state.prefix(2) {
        case "08", "57": reason = "pg_connection"      // connection exception, operator intervention (shutdown)
        case "40": reason = "pg_conflict"              // serialization failure, deadlock
        case "23": reason = "pg_constraint"
        case "53": reason = "pg_resources"             // too many connections, out of memory or disk
        case "42": reason = "pg_schema"                // undefined table/column: migrations missing
        default: reason = "pg_error"
        }
        return StoreError(.unavailable, reason, detail: "\(action): \(state) \(primary)")
    }

    static func firstLine(_ text: String) -> String {
        String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: true).first ?? "")
    }
}
