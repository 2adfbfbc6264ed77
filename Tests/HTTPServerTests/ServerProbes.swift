@testable import HTTPServer

extension HTTPServer {
    /// Requests whose connections are suspended now (waiting for a late answer or a stream's
    /// producer): what a test waits for before it checks how a sleeping connection behaves.
    var suspendedRequests: Int {
        if let engine { return engine.waitingExchanges.load(ordering: .relaxed) }
        return core.suspended.snapshot().count
    }
}
