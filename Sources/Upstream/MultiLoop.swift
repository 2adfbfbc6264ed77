import CCurl
import CShims
import Foundation
import Synchronization

/// The thread that owns libcurl's multi handle and every transfer on it.
///
/// Other threads never touch the multi handle: they append to the inbox (start, resume, cancel,
/// shut down) and call `curl_multi_wakeup`, the one multi function documented as callable from any
/// thread (https://curl.se/libcurl/c/curl_multi_wakeup.html). The loop drains the inbox, runs
/// `curl_multi_perform`, completes finished transfers, fires connect and idle timeouts, and sleeps in
/// `curl_multi_poll` until a socket is ready, libcurl's own timer is due, the nearest transfer
/// deadline passes, or a wakeup arrives. Handlers are called from here.
final class MultiLoop: @unchecked Sendable {
    /// Requests from other threads, guarded by a mutex.
    private struct Inbox {
        var starts: [TransferState] = []
        var resumes: [TransferState] = []
        var cancels: [TransferState] = []
        var shutdownRequested = false
        /// Set by the loop just before it frees the multi handle: nothing may be posted after.
        var isClosed = false
        /// A wakeup was sent and the loop has not drained yet: later posts need not send another.
        var wakePending = false
    }

    private let multi: UnsafeMutableRawPointer  // CURLM *
    private let inbox = Locked(Inbox())
    /// `pthread_self()` of the loop thread, to refuse blocking calls made on it.
    private let loopThreadID = Atomic<UInt>(0)
    private let stopped = DispatchSemaphore(value: 0)
    /// The loop's clock, shared with its transfers' callbacks.
    let clock = LoopClock()

    /// Transfers whose handles are in the multi. Loop thread only.
    private var active: [ObjectIdentifier: TransferState] = [:]

    /// Creates the multi handle with the client's connection limits and starts the loop thread.
    /// - Parameter threadName: the OS thread name (15 bytes at most), for `top -H`, perf and debuggers.
    init(configuration: UpstreamClient.Configuration, threadName: String) {
        precondition(CurlGlobal.isInitialized, "curl_global_init failed")
        guard let multi = curl_multi_init() else { preconditionFailure("curl_multi_init failed (out of memory)") }
        self.multi = multi
        if configuration.maxConnectionsPerHost > 0 {
            _ = kw_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        }
        if configuration.maxTotalConnections > 0 {
            _ = kw_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxTotalConnections)
        }
        if configuration.connectionCacheSize > 0 {
            _ = kw_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.connectionCacheSize)
        }
        let thread = Thread { [self] in
            kw_set_current_thread_name(threadName)
            run()
        }
        thread.start()
    }

    /// True on the loop thread itself.
    var isLoopThread: Bool { loopThreadID.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Hands a new transfer to the loop. After shutdown the transfer is completed here, on the caller's
    /// thread, with `.cancelled` (the loop thread is gone).
    func enqueueStart(_ state: TransferState) {
        if !post({ $0.starts.append(state) }) { state.complete(.cancelled) }
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
    /// never race with the loop freeing the multi handle. Returns false once the loop has closed.
    private func post(_ change: (inout Inbox) -> Void) -> Bool {
        inbox.withLock { box in
            guard !box.isClosed else { return false }
            change(&box)
            if !box.wakePending {
                box.wakePending = true
                _ = curl_multi_wakeup(multi)
            }
            return true
        }
    }

    // MARK: The loop (loop thread only)

    private func run() {
        loopThreadID.store(UInt(pthread_self()), ordering: .releasing)
        var running: Int32 = 0
        while true {
            clock.tick()
            let batch = inbox.withLock { box -> Inbox in
                let taken = box
                box.starts.removeAll()
                box.resumes.removeAll()
                box.cancels.removeAll()
                box.wakePending = false
                return taken
            }
            if batch.shutdownRequested {
                close(pendingStarts: batch.starts)
                return
            }
            apply(batch)
            _ = curl_multi_perform(multi, &running)
            completeFinished()
            let now = clock.tick()
            let nextDeadline = expireDeadlines(now: now)
            // curl_multi_poll shortens this to libcurl's own next timer; cap at 1 s as a safety net.
            let waitMs = nextDeadline.map { max(0, min($0 - now + 1, 1000)) } ?? 1000
            _ = curl_multi_poll(multi, nil, 0, Int32(waitMs), nil)
        }
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
                active[ObjectIdentifier(state)] = state
            } else {
                complete(state, .protocolError("curl_multi_add_handle failed"))
            }
        }
        for state in batch.cancels where active[ObjectIdentifier(state)] != nil {
            finish(state, .cancelled)
        }
        for state in batch.resumes where active[ObjectIdentifier(state)] != nil {
            if !state.resume(now: now) { finish(state, .protocolError("curl_easy_pause failed")) }
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

    /// Fails the transfers whose own deadline (connect window, idle window) has passed; returns the
    /// nearest deadline still pending.
    private func expireDeadlines(now: Int64) -> Int64? {
        var nearest: Int64?
        var expired: [(TransferState, UpstreamError)] = []
        for state in active.values {
            guard let deadline = state.deadline else { continue }
            if deadline.atMs < now {
                expired.append((state, deadline.error))
            } else if nearest.map({ deadline.atMs < $0 }) ?? true {
                nearest = deadline.atMs
            }
        }
        for (state, error) in expired { finish(state, error) }
        return nearest
    }

    /// Takes an active transfer out of the multi (closing its connection if the response was not
    /// complete) and reports its end.
    private func finish(_ state: TransferState, _ error: UpstreamError?) {
        guard active.removeValue(forKey: ObjectIdentifier(state)) != nil else { return }
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
        stopped.signal()
    }
}
