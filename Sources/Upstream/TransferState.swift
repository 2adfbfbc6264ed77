import CCurl
import CShims
import KeywardSupport
import Synchronization

/// One transfer's libcurl handle and progress, owned by the multi thread.
///
/// Concurrency: built on the caller's thread in `UpstreamClient.start`, then handed to the multi
/// thread through the inbox (a mutex: happens-before). From then on every `var` is read and written
/// only on the multi thread — inside libcurl's callbacks or the loop — except `cancelRequested`,
/// an atomic any thread may set. Hence `@unchecked Sendable`.
final class TransferState: @unchecked Sendable, DeadlineHeapMember {
    /// The handler until completion; dropped then, so a handler holding its transfer forms no cycle.
    private var handler: (any UpstreamResponseHandler)?
    /// The easy handle (CURL *); nil when setup failed.
    var easy: UnsafeMutableRawPointer?
    /// The CURLOPT_HTTPHEADER list (`RequestHeaderLines.makeList`), freed with the handle.
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// The CURLOPT_CURLU the handle reads, kept until the handle is reset.
    var parsedURL: ParsedURL?
    /// Why the handle could not be built; the loop completes the transfer with it.
    var setupError: UpstreamError?
    /// Idle window in milliseconds (0 = none), from the request.
    let idleTimeoutMs: Int64
    /// Connect window in milliseconds, from the request, counted from `startedAtMs`.
    let connectTimeoutMs: Int64
    /// Monotonic milliseconds when the handle joined the multi.
    private(set) var startedAtMs: Int64 = 0

    /// Set by `cancel()` on any thread; callbacks then abort the transfer.
    let cancelRequested = Atomic<Bool>(false)

    private var parser = ResponseHeadParser()
    /// Whether `upstreamHead` has been called.
    private(set) var headDelivered = false
    /// The request body's length in bytes, set with the handle, to tell a request sent whole.
    var requestBodyBytes = 0
    /// Whether libcurl reported a connection ready (CURLOPT_PREREQFUNCTION): the idle timer runs from then.
    private(set) var isConnected = false
    /// The connection the current request went out on, as libcurl reported it to the pre-request
    /// callback (a retry on a fresh connection reports again); nil before any.
    private(set) var connection: ConnectionEndpoints?
    /// Monotonic milliseconds of the last byte seen (or of the connection, or of the last resume).
    private(set) var lastActivityMs: Int64 = 0
    /// The handler returned false and has not been resumed.
    private(set) var handlerPaused = false
    /// A write callback returned CURL_WRITEFUNC_PAUSE: libcurl holds a chunk and waits for CURLPAUSE_CONT.
    private(set) var curlPaused = false
    /// An error a callback recorded before aborting the transfer (parse failure, cancellation).
    private(set) var callbackFailure: UpstreamError?

    /// The multi thread's clock, read by the callbacks.
    private let clock: LoopClock
    /// The loop running this transfer, set when its handle joins the multi; asked to vet a kept
    /// connection before the request goes out on it. Multi thread only.
    weak var loop: MultiLoop?
    /// This transfer's entry in its loop's deadline heap (``DeadlineHeap``'s bookkeeping).
    var deadlineHeapSlot = -1

    init(handler: any UpstreamResponseHandler, connectTimeoutMs: Int, idleTimeoutMs: Int, clock: LoopClock) {
        self.handler = handler
        self.clock = clock
        self.connectTimeoutMs = Int64(max(1, connectTimeoutMs))
        self.idleTimeoutMs = Int64(max(0, idleTimeoutMs))
    }

    /// The opaque pointer libcurl carries for this state (CURLOPT_PRIVATE and the callbacks'
    /// userdata). Unretained: the loop's table of active transfers keeps the state alive.
    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Recovers the state from a callback's userdata.
    static func from(_ opaque: UnsafeMutableRawPointer) -> TransferState {
        Unmanaged<TransferState>.fromOpaque(opaque).takeUnretainedValue()
    }

    /// Records when the handle joined the multi: the connect window starts here.
    func started(now: Int64) { startedAtMs = now }

    // MARK: libcurl callbacks (multi thread)

    /// CURLOPT_PREREQFUNCTION: a connection (new or reused) is ready, with these endpoints; the idle
    /// window starts.
    ///
    /// A connection libcurl took from its cache (`reused`) is vetted first: if its server spoke
    /// unasked since the last answer, the loop kills it here, the send fails, and libcurl retries
    /// the request once on a new connection (a reused connection that breaks before any answer
    /// byte is retried, libcurl's `Curl_retry_request`).
    func connectionReady(_ endpoints: ConnectionEndpoints, reused: Bool) {
        if reused { loop?.vetKeptConnection(endpoints) }
        isConnected = true
        connection = endpoints
        lastActivityMs = clock.nowMs
        loop?.deadlineMayHaveComeNearer(self)
    }

    /// CURLOPT_HEADERFUNCTION: one header line. Returns the bytes taken; anything else aborts the
    /// transfer (CURLE_WRITE_ERROR), with the reason kept in `callbackFailure`.
    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Int {
        if cancelRequested.load(ordering: .relaxed) {
            callbackFailure = .cancelled
            return 0
        }
        lastActivityMs = clock.nowMs
        do {
            if case .head(let status) = try parser.consume(line: line) {
                headDelivered = true
                handler?.upstreamHead(status: status, headers: parser.headers)
            }
        } catch {
            callbackFailure = error
            return 0
        }
        return line.count
    }

    /// CURLOPT_WRITEFUNCTION: one body chunk. Returns its size when taken, CURL_WRITEFUNC_PAUSE to
    /// have libcurl hold it while the handler is paused, or 0 to abort.
    func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Int {
        if cancelRequested.load(ordering: .relaxed) {
            callbackFailure = .cancelled
            return 0
        }
        if handlerPaused {
            curlPaused = true
            return kw_curl_writefunc_pause()
        }
        guard headDelivered else {
            callbackFailure = .protocolError("body before the response head")
            return 0
        }
        lastActivityMs = clock.nowMs
        if handler?.upstreamBody(chunk) == false { handlerPaused = true }
        return chunk.count
    }

    // MARK: Loop operations (multi thread)

    /// Applies `resume()`: clears the handler's pause and, when libcurl itself is paused, unpauses it
    /// (`curl_easy_pause` may deliver the held chunk right away, re-entering `receiveBody`).
    /// - Returns: false when libcurl refused to unpause.
    func resume(now: Int64) -> Bool {
        guard handlerPaused else { return true }
        handlerPaused = false
        lastActivityMs = now
        guard curlPaused, let easy else { return true }
        curlPaused = false
        return curl_easy_pause(easy, kw_curl_pause_cont()) == CURLE_OK
    }

    /// The loop's own timer, in monotonic milliseconds, and the error it ends the transfer with once
    /// the clock is past it (strictly: millisecond truncation then never cuts a window short):
    /// - before a connection is ready, `startedAtMs + connectTimeoutMs` → `.connect`. libcurl 7.88
    ///   starts its CURLOPT_CONNECTTIMEOUT only when it begins connecting, so a transfer queued behind
    ///   CURLMOPT_MAX_HOST_CONNECTIONS would otherwise wait without limit;
    /// - afterwards, `lastActivityMs + idleTimeoutMs` → `.timeout`, not while the handler holds a pause;
    /// - nil when no timer runs.
    var deadline: (atMs: Int64, error: UpstreamError)? {
        if !isConnected { return (startedAtMs + connectTimeoutMs, .connect) }
        guard idleTimeoutMs > 0, !handlerPaused else { return nil }
        return (lastActivityMs + idleTimeoutMs, .timeout)
    }

    /// The error for a transfer libcurl finished with `code`.
    func outcome(for code: CURLcode) -> UpstreamError? {
        if let callbackFailure { return callbackFailure }
        if cancelRequested.load(ordering: .relaxed) { return .cancelled }
        if code == CURLE_OK { return headDelivered ? nil : .protocolError("no response head") }
        return CurlErrorMapping.error(for: code, connected: isConnected)
    }

    /// Reports the end to the handler, once, and lets go of it. Multi thread (or the caller's thread
    /// when the client has already shut down).
    func complete(_ error: UpstreamError?) {
        guard let handler else { return }
        self.handler = nil
        let sent = requestSent
        releaseHandle()
        handler.upstreamComplete(error, afterHead: headDelivered, requestSent: sent)
    }

    /// Whether libcurl handed the whole request (a head, then every body byte) to the socket.
    private var requestSent: Bool {
        guard let easy else { return false }
        var headBytes = 0
        var bodyBytes: curl_off_t = 0
        guard kw_curl_easy_getinfo_sent(easy, &headBytes, &bodyBytes) == CURLE_OK else { return false }
        return headBytes > 0 && bodyBytes >= curl_off_t(requestBodyBytes)
    }

    /// Frees the libcurl resources (after the handle left the multi).
    func releaseHandle() {
        if let easy { EasyHandlePool.shared.giveBack(easy) }
        easy = nil
        if let headerList { RequestHeaderLines.freeList(headerList) }
        headerList = nil
        parsedURL = nil
    }

    deinit { releaseHandle() }
}
