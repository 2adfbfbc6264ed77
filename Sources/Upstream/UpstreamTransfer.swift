/// A handle on one running transfer, returned by `UpstreamClient.start`. Thread-safe.
public final class UpstreamTransfer: Sendable {
    private let state: TransferState
    private let loop: MultiLoop

    init(state: TransferState, loop: MultiLoop) {
        self.state = state
        self.loop = loop
    }

    /// Resumes a transfer the handler paused (its `upstreamBody` returned false). A no-op when it is
    /// not paused or already finished. The multi thread unpauses it (`curl_easy_pause(CURLPAUSE_CONT)`,
    /// which libcurl requires on the thread driving the handle) and delivers the held chunk first.
    public func resume() {
        loop.enqueueResume(state)
    }

    /// Aborts the transfer: the multi thread removes it, closing its connection, and completes it with
    /// `.cancelled` — promptly (one loop turn), paused or not. Idempotent; a no-op once finished.
    public func cancel() {
        guard !state.cancelRequested.exchange(true, ordering: .relaxed) else { return }
        loop.enqueueCancel(state)
    }
}
