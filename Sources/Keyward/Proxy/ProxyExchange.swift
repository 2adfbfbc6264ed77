import HTTPServer
import ProviderRegistry
import Synchronization
import Upstream

/// The response phases of one proxied request: the upstream's head rewritten
/// (``ProxyResponseHead``), its body relayed to the client as it arrives with back-pressure both
/// ways, and the request finished (``RequestFinisher``) however the transfer ends.
///
/// Upstream callbacks arrive on the upstream client's thread, the client stream's on the server's:
/// in a ``Shard`` that is one and the same thread, but the state still sits behind a lock, since the
/// server's departure check and a stop call `onClose` from other threads. A slow client makes `write` refuse more, which pauses the upstream
/// transfer until the stream drains (`onWritable` → `resume`); a client that leaves cancels the
/// upstream transfer (`onClose` → `cancel`). Memory per stream is bounded by the server's stream
/// buffer plus one upstream chunk, however long the response.
///
/// A small answer of known length (`Content-Length` ≤ ``oneShotBodyLimit``: the usual JSON reply)
/// holds its head until the first body bytes arrive, which is at once when they came in the same
/// read. If those bytes are the whole body, head and body go out as one fixed-length response:
/// no stream reader, buffer or extra wake-up, about a tenth of a proxied request's CPU in
/// `bench/proxy.sh`. Otherwise the stream starts with them, as for any answer. Nothing waits
/// for later bytes, and nothing beyond one upstream read is held.
final class ProxyExchange: UpstreamResponseHandler, Sendable {
    /// The largest `Content-Length` whose head waits for the first body bytes, in bytes (libcurl's
    /// read size, so that one read can carry the whole body).
    static let oneShotBodyLimit = 16 * 1024

    /// A response head held until the first body bytes arrive.
    private struct HeldHead {
        let status: Int
        let headers: [(String, String)]
        let bodyLength: Int
    }

    private struct State {
        var transfer: UpstreamTransfer?
        var stream: ResponseStream?
        var heldHead: HeldHead?
        /// The one-shot response went to the client: the transfer's end changes nothing.
        var answered = false
        /// A resume or cancel that arrived before `begin` handed over the transfer.
        var pendingResume = false
        var pendingCancel = false
        /// The client went away: a cancellation that follows is the client's doing, not the upstream's.
        var clientGone = false
        var bytesOut: Int64 = 0
        /// The call's credits were given back (at most once).
        var released = false
    }

    private let writer: ResponseWriter
    private let record: RequestRecord
    private let method: String
    private let responseHead: ProxyResponseHead
    private let finisher: RequestFinisher
    private let lifecycle: Lifecycle
    private let time: any TimeSource
    private let sentAtMillis: Int64
    private let state = Mutex(State())
    /// The provider's upstream slot (`UpstreamSlots`), given back once, when the transfer completes.
    private let slot: UpstreamSlots.Held?
    /// Gives the call's credits back; nil when nothing was charged.
    private let releaseCredits: (@Sendable () -> Void)?
    /// Header fields added to the provider's answer (`X-RateLimit-*`), replacing the provider's fields of the same names.
    private let extraHeaders: [(String, String)]
    /// A metered call's usage reader: sees the head, each body chunk as it is relayed, and the end.
    private let meter: MeteredCall?

    init(
        writer: ResponseWriter, record: RequestRecord, method: String, responseHead: ProxyResponseHead,
        finisher: RequestFinisher, lifecycle: Lifecycle, time: any TimeSource, slot: UpstreamSlots.Held? = nil,
        releaseCredits: (@Sendable () -> Void)? = nil, extraHeaders: [(String, String)] = [], meter: MeteredCall? = nil
    ) {
        self.meter = meter
        self.slot = slot
        self.releaseCredits = releaseCredits
        self.extraHeaders = extraHeaders
        self.writer = writer
        self.record = record
        self.method = method
        self.responseHead = responseHead
        self.finisher = finisher
        self.lifecycle = lifecycle
        self.time = time
        sentAtMillis = time.nowMillis()
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

    /// Gives the call's credits back once: the provider never answered usefully.
    private func releaseOnce() {
        guard let releaseCredits else { return }
        let first = state.withLock { state -> Bool in
            defer { state.released = true }
            return !state.released
        }
        if first { releaseCredits() }
    }

    func upstreamHead(status: Int, headers: [(String, String)]) {
        // The head is the first thing the client can get, so no body byte has reached it yet.
        if ProxyOutcome.unbilledStatuses.contains(status) { releaseOnce() }
        meter?.head(status: status, headers: headers)
        let seconds = Double(time.nowMillis() - sentAtMillis) / 1000
        record.update {
            $0.upstreamHeadSeconds = seconds
            $0.upstreamStatus = status
        }
        let clientHeaders = responseHead.clientHeaders(headers, replacedBy: extraHeaders)
        if status == 204 || status == 304 {
            // No content by definition (RFC 9110 §15.3.5, §15.4.5): a fixed empty answer, since a
            // stream would frame an empty chunked body.
            answer(HeldHead(status: status, headers: clientHeaders, bodyLength: 0), body: [])
            return
        }
        if let length = oneShotLength(status: status, headers: clientHeaders) {
            let head = HeldHead(status: status, headers: clientHeaders, bodyLength: length)
            if length == 0 {
                answer(head, body: [])
            } else {
                state.withLock { $0.heldHead = head }
            }
            return
        }
        _ = startStream(status: status, headers: clientHeaders)
    }

    /// Sends the head and opens the client stream the body is written to.
    private func startStream(status: Int, headers: [(String, String)]) -> ResponseStream {
        record.update { $0.status = status }
        let stream = writer.startStream(status: status, headers: headers)
        stream.onWritable = { [weak self] in self?.clientDrained() }
        stream.onClose = { [weak self] in self?.clientLeft() }
        state.withLock { $0.stream = stream }
        finisher.metrics.streamOpened()
        return stream
    }

    func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
        enum Next { case stream(ResponseStream), oneShot(HeldHead), open(HeldHead), drop }
        meter?.observe(chunk)
        let next = state.withLock { state -> Next in
            state.bytesOut += Int64(chunk.count)
            if let stream = state.stream { return .stream(stream) }
            guard let head = state.heldHead else { return .drop }
            state.heldHead = nil
            return chunk.count == head.bodyLength ? .oneShot(head) : .open(head)
        }
        switch next {
        case .stream(let stream): return stream.write(chunk)
        case .oneShot(let head): answer(head, body: Array(chunk))
        case .open(let head): return startStream(status: head.status, headers: head.headers).write(chunk)
        case .drop: break
        }
        return true
    }

    /// The body length whose head may wait for the first body bytes, or nil to stream at once: a
    /// valid `Content-Length` within the limit on a response that has a body (not HEAD or 1xx;
    /// 204 and 304 never get here; RFC 9110 §6.4.1).
    private func oneShotLength(status: Int, headers: [(String, String)]) -> Int? {
        guard method != "HEAD", status >= 200 else { return nil }
        guard let length = ResponseRewrite.declaredContentLength(headers), length <= ProxyExchange.oneShotBodyLimit
        else { return nil }
        return length
    }

    /// Sends head and whole body as one response: finished first, like every answer, then handed over.
    private func answer(_ head: HeldHead, body: [UInt8]) {
        state.withLock { $0.answered = true }
        record.update { $0.bytesOut = Int64(body.count) }
        finisher.finish(record, status: head.status)
        writer.respond(status: head.status, headers: head.headers, body: body)
    }

    /// Never called by a transfer, which always reports whether the request went out whole.
    func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) {
        upstreamComplete(error, afterHead: afterHead, requestSent: false)
    }

    func upstreamComplete(_ error: UpstreamError?, afterHead: Bool, requestSent: Bool) {
        // Settled last, once every release rule below has had its say.
        defer { meter?.complete(whole: error == nil) }
        slot?.release()
        let (stream, bytesOut, clientGone, answered, headWasHeld) = state.withLock {
            ($0.stream, $0.bytesOut, $0.clientGone, $0.answered, $0.heldHead != nil)
        }
        if answered { return }
        let clientCancelled = clientGone && error == .cancelled
        guard let stream else {
            if clientCancelled {
                // The client hung up before any answer: nothing reaches it, and the provider did
                // not fail. Logged and counted as 499 (nginx's "client closed request"), not a 5xx;
                // the answer only releases the connection.
                record.update {
                    $0.reason = "client_gone"
                    $0.bytesOut = 0
                }
                finisher.finish(record, status: 499)
                writer.respond(status: 502, headers: [("Connection", "close")], body: [])
                return
            }
            // Nothing was sent yet: the client gets one API error.
            if !clientGone, ProxyOutcome.isUnbilled(error, afterHead: afterHead, requestSent: requestSent) { releaseOnce() }
            let apiError = ProxyOutcome.apiError(error, clientGone: clientGone, headWasHeld: headWasHeld, cutByStop: lifecycle.isCutting)
            if !clientCancelled && apiError.code != .badRequest && apiError.code != .unavailable {
                record.note(.upstreamError(provider: responseHead.providerName, reason: apiError.reason))
            }
            finisher.respondError(writer, record, apiError)
            return
        }
        let reason = ProxyOutcome.streamReason(error, clientCancelled: clientCancelled, cutByStop: lifecycle.isCutting)
        record.update {
            $0.bytesOut = bytesOut
            if let reason { $0.reason = reason }
        }
        if let error, !clientCancelled {
            record.note(.upstreamError(provider: responseHead.providerName, reason: error.reason))
        }
        finisher.metrics.streamClosed()
        finisher.finish(record, status: 0)
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
