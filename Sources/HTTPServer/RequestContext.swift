import CMicroHTTPD
import CShims
import Synchronization

/// One request's life between libmicrohttpd and the application.
///
/// Created by the URI-log callback (the first thing MHD does for a request) and
/// released by the request-completed callback; MHD holds it as `*con_cls`.
///
/// Threads: the fields under "worker-only" are touched only by libmicrohttpd
/// callbacks for this connection, which one worker thread runs one at a time.
/// Everything the application's threads can reach is in `shared`, under its lock.
/// libmicrohttpd is entered from other threads only through
/// `MHD_resume_connection`, always while holding that lock, and never after
/// `completed` is set, so the connection pointer is never used after MHD frees it.
final class RequestContext: @unchecked Sendable {
    enum Phase {
        /// Waiting for the first access-handler call (head parsed).
        case head
        /// Receiving the body.
        case body
        /// The handler has run; waiting to queue its response.
        case handled
        /// The server answered itself (400/413/431); the connection closes.
        case refused
    }

    enum Suspension {
        case none
        /// Waiting for the handler's late response.
        case forResponse
        /// A stream's buffer is empty; waiting for the producer.
        case forData
    }

    enum Delivery {
        case awaiting
        case ready(PreparedResponse)
        case queued
    }

    struct Shared {
        var delivery = Delivery.awaiting
        var suspension = Suspension.none
        /// The request-completed callback has run: the connection is gone.
        var completed = false
        /// The server is stopping: never suspend again.
        var stopping = false
        var stream: StreamState?
    }

    let core: ServerCore
    let connection: OpaquePointer
    /// The raw request-target from the request line.
    let target: String

    // Worker-only.
    var phase = Phase.head
    var head: HTTPRequestHead?
    var body: [UInt8] = []
    var bodyLimit = 0

    let shared = Mutex(Shared())

    init(core: ServerCore, connection: OpaquePointer, target: String) {
        self.core = core
        self.connection = connection
        self.target = target
    }

    // MARK: Suspension (call with the lock held)

    /// Suspends the connection unless the server is stopping. - Returns: whether it did.
    func suspendLocked(_ shared: inout Shared, _ kind: Suspension) -> Bool {
        guard !shared.stopping, !shared.completed else { return false }
        guard core.suspended.insert(self) else {
            shared.stopping = true
            return false
        }
        shared.suspension = kind
        MHD_suspend_connection(connection)
        return true
    }

    /// Resumes the connection if it is suspended.
    func resumeLocked(_ shared: inout Shared) {
        guard shared.suspension != .none, !shared.completed else { return }
        shared.suspension = .none
        core.suspended.remove(self)
        MHD_resume_connection(connection)
    }

    // MARK: Responses (any thread)

    /// Hands the response to the connection, waking it if it waits.
    /// - Returns: false (and the response is released) when a response was
    ///   already given or the connection has gone.
    @discardableResult
    func deliver(_ response: PreparedResponse) -> Bool {
        let accepted = shared.withLock { shared -> Bool in
            guard case .awaiting = shared.delivery, !shared.completed else { return false }
            shared.delivery = .ready(response)
            resumeLocked(&shared)
            return true
        }
        if !accepted { response.release() }
        return accepted
    }

    /// True while no response has been given and the connection is open.
    var isAwaitingResponse: Bool {
        shared.withLock { shared in
            if case .awaiting = shared.delivery { return !shared.completed }
            return false
        }
    }

    // MARK: Worker side

    enum NextStep {
        case queue(PreparedResponse)
        case wait
        case close
    }

    /// After the handler ran or the connection resumed: queue the response if
    /// there is one, else suspend until there is (or close when stopping).
    func takeResponseOrSuspend() -> NextStep {
        shared.withLock { shared -> NextStep in
            switch shared.delivery {
            case .ready(let response):
                shared.delivery = .queued
                return .queue(response)
            case .queued:
                return .wait
            case .awaiting:
                return suspendLocked(&shared, .forResponse) ? .wait : .close
            }
        }
    }

    /// The request-completed callback: the connection must not be touched from now on.
    /// Fires the stream's `onClose` when the stream had not ended cleanly.
    func complete(cleanly: Bool) {
        let onClose = shared.withLock { shared -> (@Sendable () -> Void)? in
            shared.completed = true
            if shared.suspension != .none {
                // Not expected: MHD completes only running connections.
                shared.suspension = .none
                core.suspended.remove(self)
            }
            if case .ready(let response) = shared.delivery {
                response.release()
                shared.delivery = .queued
            }
            guard var stream = shared.stream else { return nil }
            let early = !(cleanly && stream.finished) && !stream.aborted
            let callback = early ? stream.onClose : nil
            stream.closed = true
            stream.closedEarly = early
            stream.onClose = nil
            stream.onWritable = nil
            stream.queue.removeAll()
            shared.stream = stream
            return callback
        }
        onClose?()
    }

    /// ``HTTPServer/stop()``: no more suspensions; wake the connection if it sleeps
    /// (it then closes: the access handler and the stream reader see `stopping`).
    func beginStopping() {
        shared.withLock { shared in
            shared.stopping = true
            resumeLocked(&shared)
        }
    }
}
