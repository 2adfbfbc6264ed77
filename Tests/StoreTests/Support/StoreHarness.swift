@testable import Store

/// One empty database for one test, which `open()` can open several times (to test reopening).
protocol StoreHarness {
    func open() throws -> any Store
}
