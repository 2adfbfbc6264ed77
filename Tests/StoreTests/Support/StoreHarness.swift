@testable import Store

/// One empty database for one test, which `open()` can open several times (to test reopening).
protocol StoreHarness {
    func open() throws -> any Store
    /// Whether `consumeRate` is the exact sliding log (SQLite) rather than bucketed windows that
    /// may refuse up to one bucket early (PostgreSQL, docs/limits.md); exact Retry-After values
    /// are checked only then.
    var exactRateWindows: Bool { get }
}

extension StoreHarness {
    var exactRateWindows: Bool { true }
}
