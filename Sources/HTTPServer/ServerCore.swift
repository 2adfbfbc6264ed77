import Synchronization

/// What one running server shares with its libmicrohttpd callbacks (their `cls`).
final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let bodyLimit: @Sendable (HTTPRequestHead) -> Int
    let handler: HTTPServer.Handler
    let onRefusal: (@Sendable (HTTPRequestRefusal) -> Void)?
    let suspended = SuspendedConnections()
    /// Requests between the URI-log and request-completed callbacks (for ``HTTPServer/drain(gracePeriodMilliseconds:)``).
    let activeRequests = Atomic<Int>(0)
    let canned = CannedResponses()

    init(
        configuration: HTTPServerConfiguration,
        bodyLimit: @escaping @Sendable (HTTPRequestHead) -> Int,
        onRefusal: (@Sendable (HTTPRequestRefusal) -> Void)?,
        handler: @escaping HTTPServer.Handler
    ) {
        self.configuration = configuration
        self.bodyLimit = bodyLimit
        self.onRefusal = onRefusal
        self.handler = handler
    }

    /// One pass of the departure check over every sleeping connection.
    func checkDepartures() {
        for context in suspended.snapshot() {
            context.checkDeparture()
        }
    }
}
