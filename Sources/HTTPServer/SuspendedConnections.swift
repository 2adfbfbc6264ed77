import KeywardSupport

/// The requests whose connections are suspended right now.
///
/// libmicrohttpd aborts the process when its daemon is stopped with a
/// connection still suspended (`MHD_stop_daemon` asserts there is none), so ``HTTPServer/stop()`` resumes
/// every member first, and no request may suspend once stopping has begun.
final class SuspendedConnections: Sendable {
    private struct State {
        var stopping = false
        var members: [ObjectIdentifier: RequestContext] = [:]
    }

    private let state = Locked(State())

    /// Records `context` as suspended. - Returns: false once stopping has begun (do not suspend).
    func insert(_ context: RequestContext) -> Bool {
        state.withLock { state in
            guard !state.stopping else { return false }
            state.members[ObjectIdentifier(context)] = context
            return true
        }
    }

    func remove(_ context: RequestContext) {
        _ = state.withLock { $0.members.removeValue(forKey: ObjectIdentifier(context)) }
    }

    /// Refuses further suspensions and returns the requests suspended now.
    func beginStopping() -> [RequestContext] {
        state.withLock { state in
            state.stopping = true
            return Array(state.members.values)
        }
    }

    /// The suspended requests, for the idle-stream probe.
    func snapshot() -> [RequestContext] {
        state.withLock { Array($0.members.values) }
    }
}
