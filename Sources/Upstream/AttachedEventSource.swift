/// Another event source that an upstream client's loop thread runs besides libcurl: in
/// Keyward, an HTTP server without threads of its own (`HTTPServer.ExternalLoop`), so that a
/// proxied request is read, forwarded and answered on one thread.
///
/// Each turn the loop waits on libcurl's sockets and `descriptor` together, for no longer than
/// `millisecondsUntilRun` allows; after libcurl's work it calls `run` if `descriptor` was
/// readable or the deadline is 0, then sends whatever transfers `run` started, and calls `run`
/// once more (descriptor not ready) if that work made the deadline 0 (an answer that came back
/// at once), so it goes out without another wait.
public struct AttachedEventSource: Sendable {
    /// Watched for readability (level-triggered).
    public let descriptor: Int32
    /// Does what is ready without blocking; on the loop thread. Its argument says whether this
    /// turn's wait reported `descriptor` readable (false: the run is for the deadline only, and
    /// need not look at the descriptor). Transfers it starts on this client join the loop
    /// directly, with no wake-up.
    public let run: @Sendable (_ descriptorReady: Bool) -> Void
    /// Milliseconds until `run` is due even without readiness: 0 = at once, nil = no deadline.
    /// Asked on the loop thread before every wait and after every turn, so it must be cheap.
    public let millisecondsUntilRun: @Sendable () -> Int64?

    /// - Parameters: see the properties.
    public init(
        descriptor: Int32, run: @escaping @Sendable (_ descriptorReady: Bool) -> Void,
        millisecondsUntilRun: @escaping @Sendable () -> Int64?
    ) {
        self.descriptor = descriptor
        self.run = run
        self.millisecondsUntilRun = millisecondsUntilRun
    }
}
