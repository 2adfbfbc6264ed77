import CPostgres

/// One query result, owned (freed with `PQclear` when released), read in binary format.
final class PGResult {
    let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    var rowCount: Int { Int(PQntuples(handle)) }

    /// Rows touched by an INSERT/UPDATE/DELETE (`PQcmdTuples`), 0 when not applicable.
    var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(handle, Int32(row), Int32(column)) == 1 }

    /// The raw binary value of a cell (empty for NULL).
    func bytes(_ row: Int, _ column: Int) -> [UInt8] {
        let count = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard count > 0, let pointer = PQgetvalue(handle, Int32(row), Int32(column)) else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    func text(_ row: Int, _ column: Int) -> String { String(decoding: bytes(row, column), as: UTF8.self) }

    /// int2, int4 or int8 in network byte order; a cell of another width is a protocol surprise,
    /// reported as an error rather than misread.
    func int64(_ row: Int, _ column: Int) throws(StoreError) -> Int64 {
        let raw = bytes(row, column)
        guard [2, 4, 8].contains(raw.count) else {
            throw StoreError(.unavailable, "pg_protocol", detail: "integer cell of \(raw.count) bytes")
        }
        // Sign-extend from the first byte, then shift in the rest.
        var value: Int64 = Int64(Int8(bitPattern: raw[0]))
        for byte in raw.dropFirst() { value = value << 8 | Int64(byte) }
        return value
    }

    func optionalInt64(_ row: Int, _ column: Int) throws(StoreError) -> Int64? {
        isNull(row, column) ? nil : try int64(row, column)
    }

    func bool(_ row: Int, _ column: Int) -> Bool { bytes(row, column).first.map { $0 != 0 } ?? false }
}
