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
    /// The loop that runs the daemon, for external-loop servers; nil when it has its own threads.
    let externalLoop: HTTPServer.ExternalLoop?
    /// External-loop servers: a connection was resumed since the loop last ran the daemon.
    /// libmicrohttpd 0.9.75 drops its inter-thread channel without an internal thread, so
    /// nothing else would tell the loop (see ``noteResume()``).
    let resumePending = Atomic<Bool>(false)
    /// Set once the server is draining: every answer from then on ends its connection
    /// (``HTTPServer/closeConnectionsAfterAnswers()``).
    let closesConnections = Atomic<Bool>(false)

    init(
        configuration: HTTPServerConfiguration,
        bodyLimit: @escaping @Sendable (HTTPRequestHead) -> Int,
        onRefusal: (@Sendable (HTTPRequestRefusal) -> Void)?,
        externalLoop: HTTPServer.ExternalLoop?,
        handler: @escaping HTTPServer.Handler
    ) {
        self.configuration = configuration
        self.bodyLimit = bodyLimit
        self.onRefusal = onRefusal
        self.externalLoop = externalLoop
        self.handler = handler
    }

    /// After `MHD_resume_connection`: an external loop must run the daemon again before it sleeps.
    func noteResume() {
        guard let externalLoop else { return }
        resumePending.store(true, ordering: .releasing)
        externalLoop.wake()
    }

    /// One pass of the departure check over every sleeping connection.
    func checkDepartures() {
        for context in suspended.snapshot() {
            context.checkDeparture()
        }
    }
}
