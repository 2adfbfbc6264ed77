@testable import HTTPServer

extension HTTPServer {
    /// Requests whose connections wait on the application now (waiting for a late answer or a stream's
    /// producer): what a test waits for before it checks how a sleeping connection behaves.
    var suspendedRequests: Int { engine.waitingExchanges.load(ordering: .relaxed) }
}
