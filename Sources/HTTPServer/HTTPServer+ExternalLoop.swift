import CMicroHTTPD
import CShims

/// Running a server from someone else's event loop.
///
/// Why: with its own threads, a server answers a proxied request by crossing to the upstream
/// client's thread and back, two wake-ups per request. A server driven by the upstream client's
/// loop (one such pair per core, sharing the port through SO_REUSEPORT) keeps a request on one
/// thread from its first byte to its last.
///
/// The contract, for the loop's one thread:
/// 1. watch ``HTTPServer/eventDescriptor`` for readability;
/// 2. call ``HTTPServer/runOnce()`` when it is readable, and whenever
///    ``HTTPServer/millisecondsUntilRun`` is 0;
/// 3. never sleep longer than ``HTTPServer/millisecondsUntilRun``.
/// Other threads that resume a connection call ``ExternalLoop/wake`` so the loop notices.
extension HTTPServer {
    /// The loop that runs an external-loop server.
    public struct ExternalLoop: Sendable {
        /// Called after a connection is resumed, from whatever thread resumed it (the loop's own
        /// included): the loop must look at ``HTTPServer/millisecondsUntilRun`` before it sleeps
        /// again. Must not block.
        public let wake: @Sendable () -> Void

        /// - Parameter wake: see ``wake``.
        public init(wake: @escaping @Sendable () -> Void) {
            self.wake = wake
        }
    }

    /// The descriptor the loop watches for readability: libmicrohttpd's epoll set over the
    /// listening socket and the connections. -1 unless running with an external loop.
    public var eventDescriptor: Int32 {
        if let engine { return engine.eventDescriptor }
        guard core.externalLoop != nil else { return -1 }
        return lifecycle.withLock { lifecycle in
            if case .running(let running) = lifecycle { return keyward_mhd_epoll_fd(running.daemon) }
            return -1
        }
    }

    /// Does whatever is ready without blocking: accepts, reads, handlers, writes, resumed
    /// connections, idle timeouts. Loop thread only; does nothing once stopped. Handlers run
    /// inside this call.
    public func runOnce() {
        if let engine { return engine.runOnce() }
        guard core.externalLoop != nil else { return }
        lifecycle.withLock { lifecycle in
            guard case .running(let running) = lifecycle else { return }
            // Cleared first: a resume during the run asks for the next one.
            core.resumePending.store(false, ordering: .relaxed)
            _ = MHD_run(running.daemon)
        }
    }

    /// How soon, in milliseconds, the loop must call ``runOnce()`` even if nothing becomes
    /// readable: 0 = at once (a resumed connection, or data libmicrohttpd already holds),
    /// otherwise the nearest idle timeout; nil = no deadline. Loop thread only.
    public var millisecondsUntilRun: Int64? {
        if let engine { return engine.millisecondsUntilRun }
        guard core.externalLoop != nil else { return nil }
        return lifecycle.withLock { lifecycle -> Int64? in
            guard case .running(let running) = lifecycle else { return nil }
            if core.resumePending.load(ordering: .acquiring) { return 0 }
            var timeout: UInt64 = 0
            guard MHD_get_timeout(running.daemon, &timeout) == .YES else { return nil }
            return Int64(min(timeout, UInt64(Int64.max)))
        }
    }
}
