/// Opens the store a `keyward.toml` `store` URL names.
///
/// - `sqlite:///absolute/path.db` or `sqlite://relative/path.db` (everything after `sqlite://` is the path);
/// - `postgres://…` or `postgresql://…`, a libpq connection URI handed to `PostgresStore` as is.
/// - Throws: `.invalidInput` `store_url` for any other scheme; whatever opening the store throws.
public func openStore(url: String) throws(StoreError) -> any Store {
    if url.hasPrefix("sqlite://") {
        return try SQLiteStore(path: String(url.dropFirst("sqlite://".count)))
    }
    if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
        return try PostgresStore(url: url)
    }
    throw .invalid("store_url")
}
