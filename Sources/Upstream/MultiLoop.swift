import CCurl
import CShims
import Foundation
import KeywardSupport
import Synchronization

/// The thread that owns libcurl's multi handle and every transfer on it.
///
/// Other threads never touch the multi handle: they append to the inbox (start, resume, cancel,
/// shut down) and signal an eventfd. The loop is libcurl's event-driven "multi_socket" API
/// (https://curl.se/libcurl/c/libcurl-multi.html, "multi_socket"): libcurl tells it which sockets to
/// watch (CURLMOPT_SOCKETFUNCTION) and when its timer is due (CURLMOPT_TIMERFUNCTION); the loop waits
/// in `epoll_wait`, then drains the inbox, hands each ready socket to `curl_multi_socket_action`,
/// fires libcurl's timer, completes finished transfers and fires connect and idle timeouts.
/// Handlers are called from here. The same set holds the attached source's registrations (an HTTP
/// server's listener and connections), told apart by ``AttachedEventSource/tokenTag`` in their
/// data, so one wait serves both.
///
/// The connect and idle timeouts sit in a ``DeadlineHeap``: a turn looks only at the transfers
/// whose entry came due, so thousands of silent streams cost nothing between their events. A
/// transfer's entry is placed when its deadline may come nearer (it starts, connects, or resumes
/// from a handler's pause); activity moves the idle deadline later without touching the heap, and
/// the entry, once due, is re-read from the transfer and put back at the later time.
///
/// Why not `curl_multi_perform` + `curl_multi_poll` (the first version): both walk every transfer on
/// every turn. Measured (now `keyward-bench upstream`) against a local nginx, 32 requests in flight: with
/// 1,000 silent SSE streams open on the same client, that loop fell from ≈ 59k to ≈ 14.5k req/s;
/// this one goes from ≈ 56k to ≈ 46k, since a turn costs what its ready sockets cost.
final class MultiLoop: @unchecked Sendable {
    /// Requests from other threads, guarded by a mutex.
    private struct Inbox {
        var starts: [TransferState] = []
        var resumes: [TransferState] = []
        var cancels: [TransferState] = []
        var shutdownRequested = false
        /// An event source to run on this thread from now on (``attach(_:)``).
        var attachment: AttachedEventSource?
        /// Set by the loop just before it frees the multi handle: nothing may be posted after.
        var isClosed = false
        /// A wakeup was sent and the loop has not drained yet: later posts need not send another.
        var wakePending = false
    }

    private let multi: UnsafeMutableRawPointer  // CURLM *
    /// The epoll set over libcurl's sockets, `wakeFD` and the attached source's registrations
    /// (their data tagged with ``AttachedEventSource/tokenTag``): the loop's one wait.
    private let epollFD: Int32
    /// Signalled by `post` to wake `epoll_wait`.
    private let wakeFD: Int32
    /// When libcurl wants CURL_SOCKET_TIMEOUT, in monotonic milliseconds; nil = no timer. Loop thread only.
    private var curlTimerMs: Int64?
    /// libcurl's sockets in the epoll set and the interest last registered (CURL_POLL_IN/OUT bits),
    /// so a repeated request costs no system call. Loop thread only.
    private var watched: [curl_socket_t: Int32] = [:]
    /// Sockets libcurl stopped watching (CURL_POLL_REMOVE: typically a keep-alive connection going
    /// back to the cache) but left in the epoll set, so reusing the connection costs one EPOLL_CTL_MOD
    /// instead of a DEL and an ADD. libcurl may close a parked socket without telling (it no longer
    /// watches it) and the number may come back for a new socket: a parked number is therefore always
    /// re-registered, never trusted. An event on a parked socket removes it for good. Loop thread only.
    private var parked: Set<curl_socket_t> = []
    /// For each parked socket, the transfer that was using it when libcurl stopped watching it.
    /// Loop thread only.
    private var parkedBy: [curl_socket_t: ObjectIdentifier] = [:]
    /// Parked sockets by the endpoints their last request went out on, and back, so a transfer's
    /// pre-request callback can find the kept connection libcurl hands it. Loop thread only.
    private var parkedByEndpoints: [ConnectionEndpoints: curl_socket_t] = [:]
    private var parkedEndpoints: [curl_socket_t: ConnectionEndpoints] = [:]
    /// For each parked socket, the interest it is still registered with in the epoll set.
    /// Loop thread only.
    private var parkedInterest: [curl_socket_t: Int32] = [:]
    /// The parked socket that `vetKeptConnection` just found quiet for a transfer reusing its
    /// connection: the same open socket, still in the epoll set, so libcurl's watching it again
    /// with the interest it was parked with needs no `epoll_ctl`. Loop thread only.
    private var vettedReuse: curl_socket_t?
    private let inbox = Locked(Inbox())
    /// `pthread_self()` of the loop thread, to refuse blocking calls made on it.
    private let loopThreadID = Atomic<UInt>(0)
    private let stopped = DispatchSemaphore(value: 0)
    /// The loop's clock, shared with its transfers' callbacks.
    let clock = LoopClock()

    /// Transfers whose handles are in the multi. Loop thread only.
    private var active: [ObjectIdentifier: TransferState] = [:]
    /// Active transfers by their connect or idle deadline (monotonic milliseconds), possibly
    /// earlier than the deadline now is (see the type's note). Loop thread only.
    private var deadlines = DeadlineHeap()
    /// The other event source this thread runs, if any. Loop thread only.
    private var attached: AttachedEventSource?
    /// True while the loop is inside `curl_multi_socket_action`, whose callbacks may not add
    /// handles (libcurl refuses recursive calls). Loop thread only.
    private var insideLibcurl = false

    /// Creates the multi handle with the client's connection limits and starts the loop thread.
    /// - Parameter threadName: the OS thread name (15 bytes at most), for `top -H`, perf and debuggers.
    init(configuration: UpstreamClient.Configuration, threadName: String) {
        precondition(CurlGlobal.isInitialized, "curl_global_init failed")
        guard let multi = curl_multi_init() else { preconditionFailure("curl_multi_init failed (out of memory)") }
        self.multi = multi
        epollFD = kw_epoll_create()
        wakeFD = kw_eventfd()
        precondition(epollFD >= 0 && wakeFD >= 0 && kw_epoll_watch(epollFD, wakeFD, 1, 0) == 0, "epoll/eventfd unavailable")
        if configuration.maxConnectionsPerHost > 0 {
            _ = kw_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        }
        if configuration.maxTotalConnections > 0 {
            _ = kw_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxTotalConnections)
        }
        if configuration.connectionCacheSize > 0 {
            _ = kw_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.connectionCacheSize)
        }
        let context = Unmanaged.passUnretained(self).toOpaque()  // the thread below keeps self alive
        _ = kw_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, context)
        _ = kw_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, context)
        _ = kw_curl_multi_set_socket_function(multi) { easy, socket, what, context, _ in
            guard let context else { return -1 }
            Unmanaged<MultiLoop>.fromOpaque(context).takeUnretainedValue().watch(socket, what: what, easy: easy)
            return 0
        }
        _ = kw_curl_multi_set_timer_function(multi) { _, timeoutMs, context in
            guard let context else { return -1 }
            Unmanaged<MultiLoop>.fromOpaque(context).takeUnretainedValue().setCurlTimer(timeoutMs)
            return 0
        }
        let thread = Thread { [self] in
            nameCurrentThread(threadName)
            run()
        }
        thread.start()
    }

    /// True on the loop thread itself.
    var isLoopThread: Bool { loopThreadID.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Hands a new transfer to the loop. After shutdown the transfer is completed here, on the caller's
    /// thread, with `.cancelled` (the loop thread is gone).
    func enqueueStart(_ state: TransferState) {
        // Started by the attached source's handler, on this thread: straight into the multi, no
        // wake-up. libcurl's timer, set to 0 by the add, gets it sent before the loop sleeps.
        if isLoopThread && !insideLibcurl {
            apply(Inbox(starts: [state]))
            return
        }
        if !post({ $0.starts.append(state) }) { state.complete(.cancelled) }
    }

    /// Runs `source` on this loop's thread from the next turn on (see ``AttachedEventSource``).
    func attach(_ source: AttachedEventSource) {
        _ = post { $0.attachment = source }
    }

    /// A new descriptor for the loop's epoll set, for an attached source to register its own
    /// descriptors in (tagged tokens); the caller closes it. -1 once the loop has closed, or when
    /// the process is out of descriptors. Any thread.
    func duplicateEventSet() -> Int32 {
        // Under the inbox lock: the loop closes its set only after marking the inbox closed there,
        // so the number duplicated is never a reused one.
        inbox.withLock { box in box.isClosed ? -1 : kw_descriptor_duplicate(epollFD) }
    }

    /// Makes the loop take one more turn soon; from the loop thread itself it does nothing, since
    /// the loop asks the attached source for its deadline before it sleeps anyway.
    func wake() {
        if !isLoopThread { _ = post { _ in } }
    }

    func enqueueResume(_ state: TransferState) { _ = post { $0.resumes.append(state) } }

    func enqueueCancel(_ state: TransferState) { _ = post { $0.cancels.append(state) } }

    /// Asks the loop to cancel every transfer and exit; with `wait`, returns once it has (never wait
    /// on the loop thread itself).
    func shutdown(wait: Bool) {
        guard post({ $0.shutdownRequested = true }) else { return }
        if wait && !isLoopThread {
            stopped.wait()
            stopped.signal()  // let any other waiter through too
        }
    }

    /// Applies `change` to the inbox and wakes the loop. The wakeup is sent under the mutex so it can
    /// never race with the loop closing the eventfd. Returns false once the loop has closed.
    private func post(_ change: (inout Inbox) -> Void) -> Bool {
        inbox.withLock { box in
            guard !box.isClosed else { return false }
            change(&box)
            if !box.wakePending {
                box.wakePending = true
                kw_eventfd_signal(wakeFD)
            }
            return true
        }
    }

    // MARK: The loop (loop thread only)

    private func run() {
        loopThreadID.store(UInt(pthread_self()), ordering: .releasing)
        let capacity = 256
        var readyData = [UInt64](repeating: 0, count: capacity)
        var readyEvents = [UInt32](repeating: 0, count: capacity)
        var readyFDs = [Int32](repeating: 0, count: capacity)
        var readyFlags = [Int32](repeating: 0, count: capacity)
        // The attached source's entries of this wait, its tokens and events.
        var sourceTokens = [UInt64](repeating: 0, count: capacity)
        var sourceEvents = [UInt32](repeating: 0, count: capacity)
        var running: Int32 = 0
        while true {
            let reported = Int(kw_epoll_wait_tagged(epollFD, &readyData, &readyEvents, &readyFlags, Int32(capacity), waitMs()))
            clock.tick()
            // Split the wait: tagged entries are the source's and never reach libcurl's paths
            // (the parked-socket check, `curl_multi_socket_action`); the rest are libcurl's
            // sockets and the wakeup, compacted in place, by descriptor.
            var ready = 0
            var sourceCount = 0
            for index in 0..<max(0, reported) {
                let data = readyData[index]
                if data & AttachedEventSource.tokenTag != 0 {
                    sourceTokens[sourceCount] = data
                    sourceEvents[sourceCount] = readyEvents[index]
                    sourceCount += 1
                } else {
                    readyFDs[ready] = Int32(truncatingIfNeeded: data)
                    readyFlags[ready] = readyFlags[index]
                    ready += 1
                }
            }
            // Drain the wakeup before taking the inbox: a post after the take signals again.
            if readyFDs.prefix(max(0, ready)).contains(wakeFD) { kw_eventfd_drain(wakeFD) }
            let batch = inbox.withLock { box -> Inbox in
                let taken = box
                box.starts.removeAll()
                box.resumes.removeAll()
                box.cancels.removeAll()
                box.wakePending = false
                box.attachment = nil
                return taken
            }
            if batch.shutdownRequested {
                close(pendingStarts: batch.starts)
                return
            }
            if let source = batch.attachment {
                if let descriptor = source.descriptor {
                    if kw_server_epoll_ctl(epollFD, 1, descriptor, KW_POLL_IN, AttachedEventSource.tokenTag) == 0 { attached = source }
                } else {
                    attached = source
                }
            }
            // Parked sockets that spoke are dealt with before any transfer can be given a kept
            // connection this turn (new starts, libcurl's timer inside another socket's action).
            for index in 0..<max(0, ready) where parked.contains(readyFDs[index]) {
                let socket = readyFDs[index]
                unpark(socket)
                _ = kw_epoll_unwatch(epollFD, socket)
                // A paused transfer's socket is parked too (libcurl stops watching it): that one
                // is in use and its bytes are the transfer's. Otherwise an idle cached connection
                // spoke or closed: bytes it sent unasked (a late body, a second response) would
                // pass libcurl 7.88's liveness check and be read as the next request's answer,
                // for another client. Kill the connection outright.
                let owner = parkedBy.removeValue(forKey: socket)
                if owner.map({ active[$0] == nil }) ?? true, !isInUse(socket) { _ = kw_socket_kill_idle(socket) }
                readyFDs[index] = wakeFD  // handled: the pass below skips it
            }
            apply(batch)
            for index in 0..<max(0, ready) where readyFDs[index] != wakeFD {
                let socket = readyFDs[index]
                insideLibcurl = true
                _ = curl_multi_socket_action(multi, socket, readyFlags[index], &running)
                insideLibcurl = false
            }
            fireCurlTimerIfDue(&running)
            completeFinished()
            expireDeadlines(now: clock.tick())
            // Entries of a source not attached yet (its registrations came before the attachment)
            // are dropped: the set is level-triggered, so they come back in the next wait.
            if let source = attached, sourceCount > 0 || source.millisecondsUntilRun() == 0 {
                sourceTokens.withUnsafeBufferPointer { tokens in
                    sourceEvents.withUnsafeBufferPointer { events in
                        source.run(AttachedEventSource.Readiness(
                            tokens: UnsafeBufferPointer(rebasing: tokens[0..<sourceCount]),
                            events: UnsafeBufferPointer(rebasing: events[0..<sourceCount])))
                    }
                }
                // Requests its handlers just started go out now rather than after another turn.
                fireCurlTimerIfDue(&running)
                completeFinished()
                // An answer that came back within that (libcurl reads right after sending when
                // the bytes are already there) goes out now too, not after a wait that would
                // return at once.
                if source.millisecondsUntilRun() == 0 {
                    source.run(AttachedEventSource.Readiness(tokens: UnsafeBufferPointer(start: nil, count: 0), events: UnsafeBufferPointer(start: nil, count: 0)))
                    fireCurlTimerIfDue(&running)
                    completeFinished()
                }
            }
        }
    }

    private func fireCurlTimerIfDue(_ running: inout Int32) {
        guard let due = curlTimerMs, due <= MonotonicClock.nowMs() else { return }
        curlTimerMs = nil  // the action may set a new one
        insideLibcurl = true
        _ = curl_multi_socket_action(multi, kw_curl_socket_timeout(), 0, &running)
        insideLibcurl = false
    }

    /// How long `epoll_wait` may sleep, in milliseconds: until libcurl's timer, the nearest transfer
    /// deadline (+1 ms: they fire strictly after), or 1 s as a safety net, whichever is first.
    private func waitMs() -> Int32 {
        let now = MonotonicClock.nowMs()
        var wait: Int64 = 1000
        if let curlTimerMs { wait = min(wait, curlTimerMs - now) }
        if let ourDeadline = deadlines.earliest?.atTime { wait = min(wait, ourDeadline - now + 1) }
        if let sourceDue = attached?.millisecondsUntilRun() { wait = min(wait, sourceDue) }
        return Int32(max(0, wait))
    }

    /// CURLMOPT_SOCKETFUNCTION: start, change or stop watching one of libcurl's sockets.
    private func watch(_ socket: curl_socket_t, what: Int32, easy: UnsafeMutableRawPointer?) {
        if what == CURL_POLL_REMOVE {
            if let interest = watched.removeValue(forKey: socket) {
                parked.insert(socket)
                parkedInterest[socket] = interest
                // The transfer that let go of the socket: still running if it only paused.
                var context: UnsafeMutableRawPointer?
                if let easy, kw_curl_easy_getinfo_private(easy, &context) == CURLE_OK, let context {
                    let state = TransferState.from(context)
                    parkedBy[socket] = ObjectIdentifier(state)
                    if let endpoints = state.connection {
                        parkedByEndpoints[endpoints] = socket
                        parkedEndpoints[socket] = endpoints
                    }
                } else {
                    parkedBy[socket] = nil
                }
            }
            return
        }
        let interest = what & CURL_POLL_INOUT
        let wasParked = parked.contains(socket)
        // A parked number is re-registered unless it was vetted for this very reuse: libcurl may
        // have closed a parked socket without telling, and a new socket may have its number.
        let stillRegistered = wasParked && vettedReuse == socket && parkedInterest[socket] == interest
        if wasParked {
            unpark(socket)
            parkedBy[socket] = nil
        }
        let known = watched[socket]
        if stillRegistered {
            watched[socket] = interest
            return
        }
        if !wasParked && known == interest { return }
        if kw_epoll_watch(epollFD, socket, interest, (wasParked || known != nil) ? 1 : 0) == 0 {
            watched[socket] = interest
        }
    }

    /// Takes `socket` out of the parked set and its endpoint maps.
    private func unpark(_ socket: curl_socket_t) {
        parked.remove(socket)
        parkedInterest[socket] = nil
        if vettedReuse == socket { vettedReuse = nil }
        if let endpoints = parkedEndpoints.removeValue(forKey: socket), parkedByEndpoints[endpoints] == socket {
            parkedByEndpoints[endpoints] = nil
        }
    }

    /// Called from a transfer's pre-request callback when libcurl hands it a kept connection:
    /// if the server sent anything since the connection was parked (bytes unasked, or end of
    /// file) that this turn has not yet seen, the connection is killed before the request goes
    /// out, so those bytes can never be read as this request's answer, for another client.
    /// libcurl's own check lets data through (it takes only end of file as dead). One
    /// non-blocking peek per request on a kept connection. A quiet one is noted (`vettedReuse`):
    /// it is the same open socket, still in the epoll set (a connection keeps its descriptor for
    /// life, so no other socket can hold the number while libcurl reuses it).
    func vetKeptConnection(_ endpoints: ConnectionEndpoints) {
        guard let socket = parkedByEndpoints[endpoints] else { return }
        let pending = kw_socket_has_pending_input(socket)
        guard pending == 1 else {
            if pending == 0 { vettedReuse = socket }
            return
        }
        unpark(socket)
        parkedBy[socket] = nil
        _ = kw_epoll_unwatch(epollFD, socket)
        _ = kw_socket_kill_idle(socket)
    }

    /// Whether an active transfer's request went out on `socket`'s connection. The socket callback
    /// cannot tell: a transfer that takes a cached connection, reads a large answer in one pass and
    /// pauses for a slow client has not yet announced the socket, whose last events still name the
    /// previous, finished transfer. Its pre-request callback named the connection's endpoints,
    /// though, and endpoints are unique among open connections. Called only when a parked socket
    /// speaks with no running transfer behind its last events, so the scan is rare.
    private func isInUse(_ socket: curl_socket_t) -> Bool {
        guard let endpoints = ConnectionEndpoints(socket: socket) else { return false }
        return active.values.contains { $0.connection == endpoints }
    }

    /// CURLMOPT_TIMERFUNCTION: -1 deletes the timer; otherwise it is due in `timeoutMs` (0 = now).
    private func setCurlTimer(_ timeoutMs: Int) {
        // The turn's clock: a timer set during the turn may come due up to a turn early, which only
        // costs libcurl a look at nothing.
        curlTimerMs = timeoutMs < 0 ? nil : clock.nowMs + Int64(timeoutMs)
    }

    private func apply(_ batch: Inbox) {
        let now = clock.nowMs
        for state in batch.starts {
            if let setupError = state.setupError {
                complete(state, setupError)
            } else if state.cancelRequested.load(ordering: .relaxed) {
                complete(state, .cancelled)
            } else if let easy = state.easy, curl_multi_add_handle(multi, easy) == CURLM_OK {
                state.started(now: now)
                state.loop = self
                active[ObjectIdentifier(state)] = state
                deadlineMayHaveComeNearer(state)
            } else {
                complete(state, .protocolError("curl_multi_add_handle failed"))
            }
        }
        for state in batch.cancels where active[ObjectIdentifier(state)] != nil {
            finish(state, .cancelled)
        }
        for state in batch.resumes where active[ObjectIdentifier(state)] != nil {
            if state.resume(now: now) {
                deadlineMayHaveComeNearer(state)
            } else {
                finish(state, .protocolError("curl_easy_pause failed"))
            }
        }
    }

    /// Completes the transfers libcurl reports done (CURLMSG_DONE).
    private func completeFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            var easy: UnsafeMutableRawPointer?
            var code = CURLE_OK
            guard kw_curl_msg_done(message, &easy, &code) == 1, let easy else { continue }
            var context: UnsafeMutableRawPointer?
            guard kw_curl_easy_getinfo_private(easy, &context) == CURLE_OK, let context else { continue }
            let state = TransferState.from(context)
            finish(state, state.outcome(for: code))
        }
    }

    /// Places `state`'s deadline in the heap if it is nearer than its entry there (or it has none):
    /// called when the transfer starts, when its connection is ready (the idle window replaces the
    /// connect window and may end sooner), and when a handler's pause ends (the idle window runs
    /// again). Loop thread only.
    func deadlineMayHaveComeNearer(_ state: TransferState) {
        guard let deadline = state.deadline, active[ObjectIdentifier(state)] === state else { return }
        deadlines.schedule(state, noLaterThan: deadline.atMs)
    }

    /// Fails the transfers whose own deadline (connect window, idle window) has passed, strictly
    /// before `now`. An entry that comes due is checked against the transfer's deadline as it is now:
    /// one that moved later goes back in at that time; one that stopped running (a handler's pause)
    /// stays out until the pause ends.
    private func expireDeadlines(now: Int64) {
        while let due = deadlines.popEarliest(atOrBefore: now - 1) {
            let state = unsafeDowncast(due.member, to: TransferState.self)  // only TransferStates are entered
            guard let deadline = state.deadline else { continue }
            if deadline.atMs < now {
                finish(state, deadline.error)
            } else {
                deadlines.schedule(state, at: deadline.atMs)
            }
        }
    }

    /// Takes an active transfer out of the multi (closing its connection if the response was not
    /// complete) and reports its end.
    private func finish(_ state: TransferState, _ error: UpstreamError?) {
        guard active.removeValue(forKey: ObjectIdentifier(state)) != nil else { return }
        deadlines.remove(state)
        if let easy = state.easy { _ = curl_multi_remove_handle(multi, easy) }
        complete(state, error)
    }

    /// Frees the handle and calls the handler's completion, once.
    private func complete(_ state: TransferState, _ error: UpstreamError?) {
        state.complete(error)
    }

    /// Shutdown: closes the inbox, cancels everything and frees the multi handle.
    private func close(pendingStarts: [TransferState]) {
        let late = inbox.withLock { box -> [TransferState] in
            box.isClosed = true
            return box.starts
        }
        for state in Array(active.values) { finish(state, .cancelled) }
        for state in pendingStarts + late { complete(state, .cancelled) }
        curl_multi_cleanup(multi)
        _ = Glibc.close(epollFD)  // nothing can signal after isClosed: post checks it under the lock
        _ = Glibc.close(wakeFD)
        stopped.signal()
    }
}
