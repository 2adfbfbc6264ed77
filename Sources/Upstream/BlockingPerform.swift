import Dispatch
import KeywardSupport

extension UpstreamClient {
    /// Sends `request` and waits for the whole response: for small JSON exchanges (Google's token and
    /// Play Integrity endpoints), not for proxied streams. Blocks the calling thread.
    /// - Parameter maxResponseBytes: cap on the response body in bytes; beyond it the transfer is aborted.
    /// - Throws: any `UpstreamError` of the transfer; `.responseTooLarge` over the cap;
    ///   `.invalidRequest` when called from a handler (on the client's thread, it would deadlock).
    public func perform(_ request: UpstreamRequest, maxResponseBytes: Int = 1 << 20) throws(UpstreamError) -> UpstreamResponse {
        guard !isOnClientThread else { throw .invalidRequest("perform called on the upstream thread") }
        let collector = CollectingHandler(limit: maxResponseBytes)
        collector.attach(start(request, handler: collector))
        return try collector.wait()
    }
}

/// Buffers one response for `perform`, up to a byte cap.
///
/// Concurrency: `status`, `headers`, `body` and `outcome` are written only on the client's thread,
/// before `done` is signalled, and read by the waiting thread only after it: the semaphore orders them.
/// The transfer reference, set from the caller's thread, sits behind a mutex.
private final class CollectingHandler: UpstreamResponseHandler, @unchecked Sendable {
    private let limit: Int
    private let done = DispatchSemaphore(value: 0)
    private var status = 0
    private var headers: [(String, String)] = []
    private var body: [UInt8] = []
    private var outcome: UpstreamError?
    /// The transfer once known, and whether the cap was crossed; whoever sees both cancels.
    private let control = Locked<(transfer: UpstreamTransfer?, overflowed: Bool)>((nil, false))

    init(limit: Int) { self.limit = max(0, limit) }

    func attach(_ transfer: UpstreamTransfer) {
        let overflowed = control.withLock { state -> Bool in
            state.transfer = transfer
            return state.overflowed
        }
        if overflowed { transfer.cancel() }
    }

    func wait() throws(UpstreamError) -> UpstreamResponse {
        done.wait()
        if let outcome { throw outcome }
        return UpstreamResponse(status: status, headers: headers, body: body)
    }

    func upstreamHead(status: Int, headers: [(String, String)]) {
        self.status = status
        self.headers = headers
    }

    func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard body.count + chunk.count <= limit else {
            outcome = .responseTooLarge(limit: limit)
            let transfer = control.withLock { state -> UpstreamTransfer? in
                state.overflowed = true
                return state.transfer
            }
            transfer?.cancel()
            return false
        }
        body.append(contentsOf: chunk)
        return true
    }

    func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) {
        if outcome == nil { outcome = error }
        done.signal()
    }
}
