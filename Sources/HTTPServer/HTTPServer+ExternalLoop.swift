/// Running a server from someone else's event loop.
///
/// Why: with its own threads, a server answers a proxied request by crossing to the upstream
/// client's thread and back, two wake-ups per request. A server driven by the upstream client's
/// loop (one such pair per core, sharing the port through SO_REUSEPORT, each server with a
/// listening socket of its own) keeps a request on one thread from its first byte to its last.
///
/// Two ways to be driven, for the loop's one thread:
///
/// Shared set (``ExternalLoop/sharedEventSet`` given; Keyward's shards): the server registers its
/// listener and connections in the loop's own epoll set, each entry's 64-bit data a token with the
/// set's tag bit, and never waits on a set of its own while it serves, so one `epoll_wait` per turn
/// serves the loop and the server.
/// 1. after each wait, pass the entries whose data has the tag (data and ready bits, untouched) to
///    ``HTTPServer/runOnce(ready:events:)``, and call it with none whenever
///    ``HTTPServer/millisecondsUntilRun`` is 0;
/// 2. never sleep longer than ``HTTPServer/millisecondsUntilRun``;
/// 3. keep tagged entries away from anything else watching the set (they are level-triggered: a
///    connection handled only in part is reported again by the next wait).
///
/// Nested set (no shared set): the server's own epoll set is one descriptor in the loop's.
/// 1. watch ``HTTPServer/eventDescriptor`` for readability;
/// 2. call ``HTTPServer/runOnce(descriptorReady:)`` when it is readable, and whenever
///    ``HTTPServer/millisecondsUntilRun`` is 0 (saying whether the descriptor was readable);
/// 3. never sleep longer than ``HTTPServer/millisecondsUntilRun``.
///
/// Either way, other threads that answer or stream call ``ExternalLoop/wake`` (and, nested, make
/// the descriptor readable) so the loop notices.
extension HTTPServer {
    /// The loop that runs an external-loop server.
    public struct ExternalLoop: Sendable {
        /// An external loop's own epoll set, for the server to register in.
        public struct SharedEventSet: Sendable {
            /// A descriptor of the loop's epoll set, handed over: the server closes it when it is
            /// released. It must stay the loop's set (a duplicate, `F_DUPFD_CLOEXEC`, keeps the
            /// set alive however the loop's own descriptor ends). -1 makes `start` fail.
            public let descriptor: Int32
            /// The single bit (bit 63 in Keyward) set in the data of every registration the server
            /// makes, so the loop tells the server's entries from its own.
            public let tokenTag: UInt64

            /// - Parameters: see the properties.
            public init(descriptor: Int32, tokenTag: UInt64) {
                self.descriptor = descriptor
                self.tokenTag = tokenTag
            }
        }

        /// Called when an answer, stream bytes or a stream's end were given for one of the server's
        /// connections (from whatever thread gave them, the loop's own included): the loop must look
        /// at ``HTTPServer/millisecondsUntilRun`` before it sleeps again. Must not block.
        public let wake: @Sendable () -> Void
        /// The loop's set the server registers in; nil = a set of the server's own, nested.
        public let sharedEventSet: SharedEventSet?

        /// - Parameters: see ``wake`` and ``sharedEventSet``.
        public init(wake: @escaping @Sendable () -> Void, sharedEventSet: SharedEventSet? = nil) {
            self.wake = wake
            self.sharedEventSet = sharedEventSet
        }
    }

    /// The descriptor a nested-set loop watches for readability: the server's epoll set over the
    /// listening socket, the connections and its wake eventfd. -1 unless running with an external
    /// loop and no shared set.
    public var eventDescriptor: Int32 {
        engine.eventDescriptor
    }

    /// Nested set: does whatever is ready without blocking: accepts, reads, handlers, writes,
    /// answers given from other threads, timeouts. Loop thread only; does nothing once stopped.
    /// Handlers run inside this call. (With a shared set it is a run with no readiness.)
    /// - Parameter descriptorReady: whether the loop's last wait reported ``eventDescriptor``
    ///   readable. False skips the server's own `epoll_wait` (one system call) and does only the
    ///   answers given and the timeouts: the set is level-triggered, so whatever became ready
    ///   since the loop's wait keeps the descriptor readable for its next one.
    public func runOnce(descriptorReady: Bool = true) {
        engine.runOnce(descriptorReady: descriptorReady)
    }

    /// Shared set: handles the server's entries of the loop's last wait (accepts, reads,
    /// handlers, writes), then answers given from other threads and timeouts, without a system
    /// call of its own beyond the I/O. Loop thread only; does nothing once stopped. Handlers run
    /// inside this call. Entries without the set's tag are skipped.
    /// - Parameters:
    ///   - tokens: each entry's 64-bit data as the wait reported it (tag included); empty for a
    ///     run that is due (``millisecondsUntilRun`` 0) with nothing ready.
    ///   - events: each entry's ready EPOLL* bits, one per token.
    ///   With a nested set, an empty list is `runOnce(descriptorReady: false)`, another `true`.
    public func runOnce(ready tokens: UnsafeBufferPointer<UInt64>, events: UnsafeBufferPointer<UInt32>) {
        engine.runOnce(ready: tokens, events: events)
    }

    /// How soon, in milliseconds, the loop must run the server even if nothing becomes
    /// readable: 0 = at once (an answer was given), otherwise the next timeout check while
    /// connections are open; nil = no deadline. Loop thread only.
    public var millisecondsUntilRun: Int64? {
        engine.millisecondsUntilRun
    }

    /// How many `epoll_wait` calls the server has made on epoll sets of its own since it started:
    /// its threads' turns, a nested set's runs that were readable, and each loop's last pass as the
    /// server stops. A shared-set server makes none while it serves. Any thread.
    public var ownWaits: Int {
        engine.ownWaits
    }
}
