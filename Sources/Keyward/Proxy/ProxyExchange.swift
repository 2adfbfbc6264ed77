import HTTPServer
import ProviderRegistry
import Synchronization
import Upstream

/// One proxied transfer: the upstream's answer streamed to the client as it arrives, with
/// back-pressure both ways.
///
/// Upstream callbacks arrive on the upstream client's thread; the client stream's callbacks on
/// the server's threads. A slow client makes `write` refuse more, which pauses the upstream
/// transfer until the stream drains (`onWritable` → `resume`); a client that leaves cancels the
/// upstream transfer (`onClose` → `cancel`). Memory per stream is bounded by the server's stream
/// buffer plus one upstream chunk, however long the response.
final class ProxyExchange: UpstreamResponseHandler, Sendable {
    private struct State {
        var transfer: UpstreamTransfer?
        var stream: ResponseStream?
        /// A resume or cancel that arrived before `begin` handed over the transfer.
        var pendingResume = false
        var pendingCancel = false
        /// The client went away: a cancellation that follows is the client's doing, not the upstream's.
        var clientGone = false
        var bytesOut: Int64 = 0
    }

    private let service: KeywardService
    private let writer: ResponseWriter
    private let context: RequestContext
    private let provider: Provider
    private let credential: ProviderCredential
    private let sentAtMillis: Int64
    private let state = Mutex(State())

    init(service: KeywardService, writer: ResponseWriter, context: RequestContext, provider: Provider, credential: ProviderCredential) {
        self.service = service
        self.writer = writer
        self.context = context
        self.provider = provider
        self.credential = credential
        sentAtMillis = service.time.nowMillis()
    }

    /// Hands over the started transfer, replaying a resume or cancel that raced ahead of it. A
    /// client that leaves while the upstream has not answered yet cancels the transfer too.
    func begin(_ transfer: UpstreamTransfer) {
        writer.onClose = { [weak self] in self?.clientLeft() }
        let (resume, cancel) = state.withLock { state -> (Bool, Bool) in
            state.transfer = transfer
            defer { state.pendingResume = false }
            return (state.pendingResume, state.pendingCancel)
        }
        if cancel { transfer.cancel() } else if resume { transfer.resume() }
    }

    // MARK: UpstreamResponseHandler

    func upstreamHead(status: Int, headers: [(String, String)]) {
        let seconds = Double(service.time.nowMillis() - sentAtMillis) / 1000
        service.metrics.observeUpstreamLatency(provider: provider.name, seconds: seconds)
        var clientHeaders = ResponseRewrite.clientHeaders(headers.map { (name: $0.0, value: $0.1) }, credential: credential)
            .map { ($0.name, $0.value) }
        // The provider's own X-Request-Id (if any) passes through untouched; ours has its own name.
        clientHeaders.append(("X-Keyward-Request-Id", context.id))
        context.update { $0.status = status }
        let stream = writer.startStream(status: status, headers: clientHeaders)
        stream.onWritable = { [weak self] in self?.clientDrained() }
        stream.onClose = { [weak self] in self?.clientLeft() }
        state.withLock { $0.stream = stream }
        service.metrics.streamOpened()
    }

    func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard let stream = state.withLock({ state -> ResponseStream? in
            state.bytesOut += Int64(chunk.count)
            return state.stream
        }) else { return true }
        return stream.write(chunk)
    }

    func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) {
        let (stream, bytesOut, clientGone) = state.withLock { ($0.stream, $0.bytesOut, $0.clientGone) }
        let clientCancelled = clientGone && error == .cancelled
        guard let stream else {
            // Nothing was sent yet: the client gets one API error.
            let apiError: APIError
            switch error {
            case .timeout?: apiError = APIError(.upstreamTimeout, reason: "upstream_timeout")
            case .cancelled? where clientGone: apiError = APIError(.upstreamError, reason: "client_gone")
            // libcurl refused what the client sent (a header it cannot frame): the client's fault.
            case .invalidRequest?: apiError = APIError(.badRequest, reason: "request_unforwardable")
            case let other?: apiError = APIError(.upstreamError, reason: other.reason)
            case nil: apiError = APIError(.upstreamError, reason: "upstream_no_response")
            }
            if !clientCancelled && apiError.code != .badRequest {
                service.metrics.increment("keyward_upstream_errors_total", ["provider": provider.name, "reason": apiError.reason])
            }
            service.respondError(writer, context, apiError)
            return
        }
        context.update {
            $0.bytesOut = bytesOut
            if clientCancelled {
                // A graceful stop that ran out of time closes the client side too: say so.
                $0.reason = service.draining.load(ordering: .relaxed) ? "stream_cut_server_stopping" : "client_gone"
            } else if let error {
                $0.reason = "stream_cut_" + error.reason
            }
        }
        if let error, !clientCancelled {
            service.metrics.increment("keyward_upstream_errors_total", ["provider": provider.name, "reason": error.reason])
        }
        service.metrics.streamClosed()
        if context.markFinished(status: 0) { service.log(context) }
        if error != nil { stream.abort() } else { stream.finish() }
    }

    // MARK: client side

    private func clientDrained() {
        let transfer = state.withLock { state -> UpstreamTransfer? in
            if state.transfer == nil { state.pendingResume = true }
            return state.transfer
        }
        transfer?.resume()
    }

    private func clientLeft() {
        let transfer = state.withLock { state -> UpstreamTransfer? in
            state.clientGone = true
            if state.transfer == nil { state.pendingCancel = true }
            return state.transfer
        }
        transfer?.cancel()
    }
}
