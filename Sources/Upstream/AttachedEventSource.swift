/// Another event source that an upstream client's loop thread runs besides libcurl: in
/// Keyward, an HTTP server without threads of its own (`HTTPServer.ExternalLoop`), so that a
/// proxied request is read, forwarded and answered on one thread.
///
/// The loop has one epoll set (``UpstreamClient/sharedEventSet()``) and one `epoll_wait` per turn.
/// libcurl's sockets are registered in it with their descriptor as the event's 64-bit data (upper
/// 32 bits zero); the source registers its own descriptors there itself, each with a token that
/// has ``tokenTag`` set, or names one `descriptor` that the loop registers for it (token
/// ``tokenTag`` itself, readability, level-triggered). Each turn, after libcurl's work, the loop
/// calls `run` with the tagged entries that wait reported (untouched, tag included) if there were
/// any or the deadline is 0; then sends whatever transfers `run` started, and calls `run` once more
/// (no entries) if that work made the deadline 0 (an answer that came back at once), so it goes out
/// without another wait. Tagged entries never reach libcurl, and libcurl's never reach the source.
public struct AttachedEventSource: Sendable {
    /// The bit that marks a registration in the loop's set as the source's (bit 63 of the
    /// event's data); a libcurl socket's data is its descriptor, which never has it.
    public static let tokenTag: UInt64 = 1 << 63

    /// The source's entries of one wait, in the order the kernel reported them: `tokens[i]` is
    /// the data it registered (``tokenTag`` set), `events[i]` the EPOLL* bits that were ready.
    /// Valid only during the `run` call it is passed to.
    public struct Readiness {
        /// The registered data of each ready entry.
        public let tokens: UnsafeBufferPointer<UInt64>
        /// The ready EPOLL* bits of each entry (`EPOLLIN` 0x1, `EPOLLOUT` 0x4, `EPOLLRDHUP` 0x2000, ...).
        public let events: UnsafeBufferPointer<UInt32>
        /// No entry: the run is for the deadline only.
        public var isEmpty: Bool { tokens.isEmpty }

        /// - Parameters: see the properties; both of one length.
        public init(tokens: UnsafeBufferPointer<UInt64>, events: UnsafeBufferPointer<UInt32>) {
            precondition(tokens.count == events.count, "one event per token")
            self.tokens = tokens
            self.events = events
        }
    }

    /// A descriptor the loop registers for the source (readability, level-triggered, token
    /// ``tokenTag``), or nil when the source registers its own in the loop's set.
    public let descriptor: Int32?
    /// Does what is ready without blocking; on the loop thread. Its argument is this turn's
    /// tagged entries (empty: the run is for the deadline only). Transfers it starts on this
    /// client join the loop directly, with no wake-up.
    public let run: @Sendable (_ ready: Readiness) -> Void
    /// Milliseconds until `run` is due even without readiness: 0 = at once, nil = no deadline.
    /// Asked on the loop thread before every wait and after every turn, so it must be cheap.
    public let millisecondsUntilRun: @Sendable () -> Int64?

    /// - Parameters: see the properties.
    public init(
        descriptor: Int32? = nil, run: @escaping @Sendable (_ ready: Readiness) -> Void,
        millisecondsUntilRun: @escaping @Sendable () -> Int64?
    ) {
        self.descriptor = descriptor
        self.run = run
        self.millisecondsUntilRun = millisecondsUntilRun
    }
}
