import CMicroHTTPD
import CShims
import KeywardSupport
#if canImport(Glibc)
import Glibc
#endif

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
        /// The server answered 413 for a declared length over the limit and reads the rest of the
        /// declared body only to drop it, then closes (``RequestContext/drainedBodyBytes``).
        case draining
    }

    typealias Callback = @Sendable () -> Void

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
        /// The departure check saw the client leave while the connection slept.
        var clientGone = false
        /// Fires once if the connection ends before the response was fully delivered.
        var onClose: (@Sendable () -> Void)?
        /// Set at completion: the connection ended before the response was fully delivered.
        var endedEarly = false
        var stream: StreamState?
    }

    let core: ServerCore
    let connection: OpaquePointer
    /// The connection's socket: read by the departure check only while the
    /// connection is suspended (so libmicrohttpd cannot close it) and under the lock.
    let socket: Int32
    /// The raw request-target from the request line.
    let target: String

    // Worker-only.
    var phase = Phase.head
    /// The server already answered on the socket itself (see ``LengthRefusal``): close on the next call.
    var answeredDirectly = false
    /// The registry of requests in their head this one is in, until its head is handled or it ends.
    /// Kept here rather than looked up: a daemon stopped from another thread ends its requests there.
    var headRegistry: ThreadHeadRequests?

    /// Takes the request out of its thread's registry of requests still in their head.
    func leaveHeadRegistry() {
        headRegistry?.remove(self)
        headRegistry = nil
    }
    var head: HTTPRequestHead?
    var body: [UInt8] = []
    var bodyLimit = 0

    let shared = Locked(Shared())

    init(core: ServerCore, connection: OpaquePointer, socket: Int32, target: String) {
        self.core = core
        self.connection = connection
        self.socket = socket
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
        core.noteResume()
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
                if shared.clientGone { return .close }
                return suspendLocked(&shared, .forResponse) ? .wait : .close
            }
        }
    }

    /// The request-completed callback: the connection must not be touched from now on.
    /// Fires `onClose` when the response was not fully delivered (a stream the
    /// producer aborted excepted: it knows).
    func complete(cleanly: Bool) {
        leaveHeadRegistry()
        // Head accepted, body never finished (the client left or idled out): no handler ran, so
        // only the server can tell the application the request existed.
        if phase == .body, let head {
            phase = .refused
            core.onRefusal?(Self.bodyEnded(queuedStatus: Int(keyward_mhd_queued_status(connection)), from: head.remoteAddress))
        }
        // Callbacks leave the lock before they are called or released: releasing one may
        // run a ResponseWriter's or ResponseStream's deinit, which takes this lock again.
        let (callback, released) = shared.withLock { shared -> (Callback?, [Callback?]) in
            shared.completed = true
            if shared.suspension != .none {
                // Not expected: MHD completes only running connections.
                shared.suspension = .none
                core.suspended.remove(self)
            }
            let delivered: Bool
            switch shared.delivery {
            case .ready(let response):
                response.release()
                shared.delivery = .queued
                delivered = false
            case .awaiting:
                delivered = false
            case .queued:
                if let stream = shared.stream {
                    delivered = (cleanly && stream.finished) || stream.aborted
                } else {
                    delivered = cleanly
                }
            }
            var released: [Callback?] = [shared.onClose]
            if shared.stream != nil {
                released.append(shared.stream?.onWritable)
                shared.stream?.onWritable = nil
                shared.stream?.queue.removeAll()
            }
            shared.endedEarly = !delivered
            let callback = delivered ? nil : shared.onClose
            shared.onClose = nil
            return (callback, released)
        }
        callback?()
        _ = released
    }

    /// What ended a body that never completed: libmicrohttpd's own refusal when it queued one (it
    /// reads the chunked framing itself and answers a malformed one with an HTML page; no
    /// access-handler call follows), else the client leaving (499, nothing sent).
    /// - Parameter queuedStatus: the status of the response queued on the connection, 0 if none.
    static func bodyEnded(queuedStatus: Int, from address: String) -> HTTPRequestRefusal {
        switch queuedStatus {
        case 0:
            HTTPRequestRefusal(status: 499, code: "client_closed", reason: "body_incomplete", remoteAddress: address)
        // A chunk size or chunk end that is not RFC 9112 §7.1 `chunk-size [ chunk-ext ] CRLF`, or a bad trailer line.
        case 400:
            .badRequest("chunked_body_malformed", from: address)
        // A chunk size of hexadecimal digits past 2^64 − 1.
        case 413:
            HTTPRequestRefusal(status: 413, code: "payload_too_large", reason: "chunk_size_too_large", remoteAddress: address)
        // Trailer fields that did not fit in the connection's memory pool.
        default:
            HTTPRequestRefusal(status: queuedStatus, code: "bad_request", reason: "trailer_too_large", remoteAddress: address)
        }
    }

    /// Installs `onClose`; fires it at once when the connection already ended early.
    func setOnClose(_ callback: Callback?) {
        // The replaced callback is released outside the lock (see `complete`).
        let (fireNow, replaced) = shared.withLock { shared -> (Bool, Callback?) in
            if shared.completed { return (shared.endedEarly, nil) }
            let replaced = shared.onClose
            shared.onClose = callback
            return (false, replaced)
        }
        _ = replaced
        if fireNow { callback?() }
    }

    /// The departure check (timer thread): if the connection sleeps and its
    /// client has closed or reset it, wake it so libmicrohttpd closes it and
    /// `onClose` fires. A client that half-closes after its request counts as gone (as in nginx).
    func checkDeparture() {
        shared.withLock { shared in
            guard shared.suspension != .none, !shared.completed, !shared.clientGone, socket >= 0 else { return }
            var probe: UInt8 = 0
            let received = recv(socket, &probe, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            let gone = received == 0 || (received < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            guard gone else { return }
            shared.clientGone = true
            resumeLocked(&shared)
        }
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
