import Store

/// How a failed store call ends a request: 503 `unavailable` (the answer carries `Retry-After`),
/// `keyward_store_errors_total{operation}` counted, and the store's own reason slug (`sqlite_busy`,
/// `pg_connection`, …) on a `store_error` line written with the request's.
enum StoreFailure {
    /// Notes the failure of `operation` in `record` and returns the error that ends the request.
    static func apiError(_ operation: String, _ error: StoreError?, record: RequestRecord) -> APIError {
        record.note(.storeError(operation: operation))
        if let error { record.update { $0.storeFailure = (operation, error.reason) } }
        return .unavailable(reason: "store_\(operation)_failed")
    }
}
