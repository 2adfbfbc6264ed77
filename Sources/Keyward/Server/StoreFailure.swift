import Store

/// How a failed store call ends a request: 503 `unavailable` (the answer carries `Retry-After`),
/// `keyward_store_errors_total{operation}` counted, and the store's own reason slug (`sqlite_busy`,
/// `pg_connection`, …) on a `store_error` line written with the request's (at most one a second
/// per operation and reason: ``Logger/storeError(operation:reason:)``).
enum StoreFailure {
    /// Notes the failure of `operation` in `record` and returns the error that ends the request.
    static func apiError(_ operation: String, _ error: StoreError?, record: RequestRecord) -> APIError {
        record.note(.storeError(operation: operation))
        if let error { record.update { $0.storeFailure = (operation, error.reason) } }
        return .unavailable(reason: "store_\(operation)_failed")
    }
}

extension Logger {
    /// Writes a `store_error` line for `operation` (a fixed word, e.g. `rate_consume`) failing with
    /// the store's `reason` slug: the first of each (operation, reason), then at most one a second
    /// with `suppressed`, the lines held back since the last one. A store that fails every request
    /// (a full disk) would otherwise add a line per request to a log that may share that disk; the
    /// counter `keyward_store_errors_total` still counts every failure.
    func storeError(operation: String, reason: String) {
        emitThrottled("store_error", key: operation + " " + reason) { line in
            line.add("operation", operation)
            line.add("reason", reason)
        }
    }
}
