/// One numbered schema step. The canonical text lives in `Migrations/<dialect>/NNN_name.sql` at the
/// repository root; `SQLiteMigrations`/`PostgresMigrations` embed a byte-identical copy so the binary
/// needs no files at run time (a test compares the two).
public struct Migration: Sendable, Equatable {
    /// 1, 2, 3 … applied in order, each once, recorded in `schema_migrations`.
    public let version: Int
    /// The file name's `name` part, recorded with the version so a renumbered or swapped file is noticed.
    public let name: String
    /// The SQL script, possibly several statements; run inside the migration's transaction.
    public let sql: String

    /// `NNN_name.sql`, the canonical file name.
    public var fileName: String {
        let digits = String(version)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits + "_" + name + ".sql"
    }

    /// The versions still to apply given those already recorded (`applied`: version → name).
    /// - Throws: `.schema` `schema_newer` when the database holds a version this binary does not know
    ///   (an older Keyward must not write to a newer schema), `schema_mismatch` when a recorded version
    ///   has another name.
    static func pending(_ all: [Migration], applied: [Int: String]) throws(StoreError) -> [Migration] {
        let known = Dictionary(uniqueKeysWithValues: all.map { ($0.version, $0.name) })
        for (version, name) in applied.sorted(by: { $0.key < $1.key }) {
            guard let expected = known[version] else {
                throw StoreError(.schema, "schema_newer", detail: "database has migration \(version) (\(name)) unknown to this binary")
            }
            guard expected == name else {
                throw StoreError(.schema, "schema_mismatch", detail: "migration \(version) recorded as \(name), embedded as \(expected)")
            }
        }
        return all.filter { applied[$0.version] == nil }.sorted { $0.version < $1.version }
    }
}
