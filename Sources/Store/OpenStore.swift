/// Opens the store a `keyward.toml` `store` URL names.
///
/// - `sqlite:///absolute/path.db` or `sqlite://relative/path.db` (everything after `sqlite://` is the path);
/// - `postgres://…` or `postgresql://…`, a libpq connection URI handed to `PostgresStore` as is.
/// - Parameter createIfMissing: false to refuse a SQLite file that does not exist (`sqlite_missing`)
///   instead of creating an empty database there (commands that only read); PostgreSQL ignores it.
/// - Throws: `.invalidInput` `store_url` for any other scheme; whatever opening the store throws.
public func openStore(url: String, createIfMissing: Bool = true) throws(StoreError) -> any Store {
    if url.hasPrefix("sqlite://") {
        var options = SQLiteStore.Options()
        options.createIfMissing = createIfMissing
        return try SQLiteStore(path: String(url.dropFirst("sqlite://".count)), options: options)
    }
    if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
        return try PostgresStore(url: url)
    }
    throw .invalid("store_url")
}
