/// Receives one transfer's response as it streams in.
///
/// Every call happens on the upstream client's own thread (the thread that drives libcurl's multi
/// handle), in this order: `upstreamHead` at most once, then `upstreamBody` for each chunk, then
/// `upstreamComplete` exactly once. The calls must return quickly and must not block: every transfer
/// of the client shares that thread. Calling `UpstreamTransfer.resume()` or `cancel()` from inside a
/// call is fine; calling `UpstreamClient.perform` is not.
public protocol UpstreamResponseHandler: AnyObject, Sendable {
    /// The final response's status (100…599; 1xx interim responses are skipped) and its header
    /// fields in arrival order, obs-folded lines joined with one space (RFC 9112 §5.2), names as sent.
    /// Framing fields (`Transfer-Encoding`, `Connection`, …) describe the upstream hop, not the chunks
    /// `upstreamBody` delivers (transfer coding is already removed): a proxy drops them (RFC 9110 §7.6.1).
    func upstreamHead(status: Int, headers: [(String, String)])

    /// One chunk of the response content as it arrived, with transfer coding removed (content
    /// coding such as gzip is untouched). The bytes are valid only during the call.
    /// - Returns: `true` to keep receiving; `false` when the chunk was taken but the consumer is full:
    ///   the transfer pauses (the upstream is no longer read, so TCP pushes back) until
    ///   `UpstreamTransfer.resume()`. At most one further chunk may arrive in between; it is held
    ///   by libcurl and delivered after the resume.
    func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool

    /// The end of the transfer. `error` is nil for a clean end; `afterHead` tells whether
    /// `upstreamHead` was called (always true for a clean end), so the proxy knows whether it can
    /// still answer 502/504 or must cut the stream it already started.
    func upstreamComplete(_ error: UpstreamError?, afterHead: Bool)

    /// `upstreamComplete(_:afterHead:)` with one more fact: whether libcurl handed the whole
    /// request (head and every body byte) to the connection's socket, so the upstream may have
    /// received it and acted on it (a provider bills work it was asked for even when its answer
    /// never came). False when nothing or only part of it went out (no connection, a connection
    /// broken or stalled while sending). The default forwards to the two-argument form.
    func upstreamComplete(_ error: UpstreamError?, afterHead: Bool, requestSent: Bool)
}

extension UpstreamResponseHandler {
    public func upstreamComplete(_ error: UpstreamError?, afterHead: Bool, requestSent: Bool) {
        upstreamComplete(error, afterHead: afterHead)
    }
}
