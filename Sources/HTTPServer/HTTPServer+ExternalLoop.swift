/// Running a server from someone else's event loop.
///
/// Why: with its own threads, a server answers a proxied request by crossing to the upstream
/// client's thread and back, two wake-ups per request. A server driven by the upstream client's
/// loop (one such pair per core, sharing the port through SO_REUSEPORT) keeps a request on one
/// thread from its first byte to its last.
///
/// The contract, for the loop's one thread:
/// 1. watch ``HTTPServer/eventDescriptor`` for readability;
/// 2. call ``HTTPServer/runOnce(descriptorReady:)`` when it is readable, and whenever
///    ``HTTPServer/millisecondsUntilRun`` is 0 (saying whether the descriptor was readable);
/// 3. never sleep longer than ``HTTPServer/millisecondsUntilRun``.
/// Other threads that answer or stream call ``ExternalLoop/wake`` (and make the descriptor
/// readable) so the loop notices.
extension HTTPServer {
    /// The loop that runs an external-loop server.
    public struct ExternalLoop: Sendable {
        /// Called when an answer, stream bytes or a stream's end were given for one of the server's
        /// connections (from whatever thread gave them, the loop's own included): the loop must look
        /// at ``HTTPServer/millisecondsUntilRun`` before it sleeps again. Must not block.
        public let wake: @Sendable () -> Void

        /// - Parameter wake: see ``wake``.
        public init(wake: @escaping @Sendable () -> Void) {
            self.wake = wake
        }
    }

    /// The descriptor the loop watches for readability: the server's epoll set over the
    /// listening socket, the connections and its wake eventfd. -1 unless running with an external loop.
    public var eventDescriptor: Int32 {
        engine.eventDescriptor
    }

    /// Does whatever is ready without blocking: accepts, reads, handlers, writes, answers given
    /// from other threads, timeouts. Loop thread only; does nothing once stopped. Handlers run
    /// inside this call.
    /// - Parameter descriptorReady: whether the loop's last wait reported ``eventDescriptor``
    ///   readable. False skips the server's own `epoll_wait` (one system call) and does only the
    ///   answers given and the timeouts: the set is level-triggered, so whatever became ready
    ///   since the loop's wait keeps the descriptor readable for its next one.
    public func runOnce(descriptorReady: Bool = true) {
        engine.runOnce(descriptorReady: descriptorReady)
    }

    /// How soon, in milliseconds, the loop must call ``runOnce(descriptorReady:)`` even if nothing becomes
    /// readable: 0 = at once (an answer was given), otherwise the next timeout check while
    /// connections are open; nil = no deadline. Loop thread only.
    public var millisecondsUntilRun: Int64? {
        engine.millisecondsUntilRun
    }
}
