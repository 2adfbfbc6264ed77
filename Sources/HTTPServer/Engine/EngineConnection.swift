import CShims
import HTTP1Codec
import HTTPFields
import KeywardSupport
#if canImport(Glibc)
import Glibc
#endif

/// One client connection in the engine: its socket, the codec's state machine, the read buffer,
/// the answer being sent. Lives on its loop's thread and is touched only there; other threads
/// hold it only to name it in ``EngineLoop/post(_:)``.
///
/// Reading stops while a request waits for its answer (bytes of a pipelined next request stay in
/// the kernel or the buffer until the answer is sent: requests are answered in order, one at a
/// time). While it waits the socket is watched only for the client leaving (EPOLLRDHUP), which
/// ends the exchange at once: a client that half-closes after its request counts as gone.
final class EngineConnection: @unchecked Sendable, DeadlineHeapMember {
    let fd: Int32
    let token: UInt64
    let loop: EngineLoop
    let remoteAddress: String
    private var codec: ServerConnection
    private let readBuffer: ReadBuffer
    private var output = OutputQueue()
    private var head: HTTPRequestHead?
    private var isHeadRequest = false
    private var body: [UInt8] = []
    private var exchange: EngineExchange?
    private var framer: BodyFramer?
    /// The answer's last byte is queued: once the output drains the exchange is complete.
    private var answerComplete = false
    /// Close once the output drains (refusal, `Connection: close`, close-delimited body).
    private var closeAfterOutput = false
    /// The answer is cut (an aborted or truncated stream): close once the output drains, no clean end.
    private var cutAfterOutput = false
    /// A 413 went out; the declared body is read and dropped until the codec has it all.
    private var discarding = false
    private var sentShutdown = false
    private var countedActive = false
    /// Counted in ``EngineServer/waitingExchanges``.
    private var waiting = false
    private(set) var closed = false
    private var interest: UInt32 = 0
    /// Milliseconds (monotonic) of the last byte either way, and of the first byte of the head being read.
    private(set) var lastActivity: Int64
    private var headStarted: Int64 = 0
    /// This connection's entry in its loop's deadline heap (``DeadlineHeap``'s bookkeeping).
    var deadlineHeapSlot = -1

    init(fd: Int32, token: UInt64, loop: EngineLoop, remoteAddress: String, now: Int64) {
        self.fd = fd
        self.token = token
        self.loop = loop
        self.remoteAddress = remoteAddress
        let configuration = loop.server.configuration
        codec = ServerConnection(limits: RequestHeadLimits(
            maxHeadBytes: configuration.maxHeaderBytes, maxFields: configuration.maxHeaderFields))
        readBuffer = ReadBuffer(maxCapacity: configuration.maxHeaderBytes + 4096)
        lastActivity = now
    }

    /// Registers the socket with the loop's poller, watched for requests.
    func register() -> Bool {
        interest = KW_POLL_IN | KW_POLL_RDHUP
        return loop.poller.add(fd, interest: interest, token: token)
    }

    // MARK: Readiness

    func handle(_ readiness: Poller.Readiness, now: Int64) {
        guard !closed else { return }
        if readiness.isReadable && !readiness.peerGone && !isReading {
            // Bytes of a next request while this one's answer is pending: stop watching for them
            // until the answer is sent. Read interest is dropped only then, not for every request,
            // so an exchange answered at once costs no epoll_ctl.
            updateInterest(droppingIdleRead: true)
        }
        if readiness.isWritable || (readiness.peerGone && !isReading) {
            if exchange != nil && !isReading && readiness.peerGone {
                // Gone while its answer was awaited or sent (EPOLLRDHUP): the exchange ends now.
                close()
                return
            }
            flush(now: now)
            guard !closed else { return }
        }
        if readiness.isReadable || readiness.peerGone, isReading {
            receive(now: now)
        }
    }

    /// Reading requests (or a refused body to drop), as opposed to waiting on or sending an answer.
    private var isReading: Bool {
        exchange == nil && !closeAfterOutput || discarding
    }

    private func receive(now: Int64) {
        var peerClosed = false
        var rounds = 0
        while rounds < 16 {
            rounds += 1
            let space = readBuffer.spaceForReceive()
            guard space.count > 0 else { break }
            let got = recv(fd, space.baseAddress, space.count, 0)
            if got > 0 {
                readBuffer.didReceive(got)
                lastActivity = now
                if got < space.count { break }
                continue
            }
            if got == 0 {
                peerClosed = true
                break
            }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { break }
            close()
            return
        }
        if headStarted == 0 && readBuffer.count > 0 { headStarted = now }
        process(now: now)
        // A client that closed its side is gone: an answer still owed is not delivered (onClose),
        // a body in progress is reported as abandoned.
        if peerClosed && !closed { close() }
    }

    // MARK: Requests

    /// Feeds the codec what is buffered and acts on its events until it needs more bytes or waits.
    func process(now: Int64) {
        while !closed && exchange == nil && !closeAfterOutput {
            let buffer = readBuffer.unconsumed
            let event = codec.next(buffer) { parsed in
                let head = makeHead(parsed, in: buffer)
                self.head = head
                return loop.server.bodyLimit(head)
            }
            switch event {
            case .needMore(let consumed):
                readBuffer.consume(consumed)
                if discarding && codec.state == .closed {
                    close()
                    return
                }
                if codec.state == .readingHead && !codec.requestInProgress { readBuffer.releaseIfEmpty() }
                return
            case .head(let parsed, let sendContinue, let consumed):
                readBuffer.consume(consumed)
                isHeadRequest = head?.method == "HEAD"
                if !countedActive {
                    countedActive = true
                    loop.server.activeRequests.add(1, ordering: .relaxed)
                }
                if case .contentLength(let length) = parsed.framing { body.reserveCapacity(length) }
                if sendContinue {
                    output.append(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                    flush(now: now)
                }
            case .body(let range, let consumed):
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[range]))
                readBuffer.consume(consumed)
            case .endOfRequest(let consumed):
                readBuffer.consume(consumed)
                startExchange(now: now)
            case .refuse(let refusal):
                refuse(refusal, now: now)
                return
            case .waitForAnswer:
                return
            case .closed:
                close()
                return
            }
        }
    }

    private func makeHead(_ parsed: ParsedRequestHead, in buffer: UnsafeRawBufferPointer) -> HTTPRequestHead {
        func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeRawBufferPointer(rebasing: buffer[range]), as: UTF8.self)
        }
        let framing: HTTPRequestHead.BodyFraming
        switch parsed.framing {
        case .none: framing = .none
        case .contentLength(let length): framing = .contentLength(length)
        case .chunked: framing = .chunked
        }
        return HTTPRequestHead(
            method: text(parsed.method), target: text(parsed.target),
            version: parsed.version == .http10 ? .http10 : .http11,
            headers: parsed.fields.map { (name: text($0.name), value: text($0.value)) },
            remoteAddress: remoteAddress, bodyFraming: framing)
    }

    private func refuse(_ refusal: ServerConnection.Refusal, now: Int64) {
        let report = HTTPRequestRefusal(
            status: refusal.status, code: refusal.code, reason: refusal.reason, remoteAddress: remoteAddress)
        loop.server.onRefusal?(report)
        let text = Array("{\"error\":\"\(refusal.code)\"}".utf8)
        output.append(Array((
            "HTTP/1.1 \(refusal.status) \(ResponseHeadWriter.reasonPhrase(refusal.status))\r\n"
            + "Content-Type: application/json\r\nKeyward-Error: \(refusal.code)\r\n"
            + "Content-Length: \(text.count)\r\nConnection: close\r\n\r\n").utf8))
        output.append(text)
        body = []
        finishActive()
        if refusal.discardsBodyBytes > 0 {
            discarding = true
            flush(now: now)
            process(now: now)
        } else {
            closeAfterOutput = true
            flush(now: now)
        }
    }

    private func startExchange(now: Int64) {
        guard let head else { return }
        let exchange = EngineExchange(connection: self, highWater: loop.server.configuration.streamHighWaterBytes)
        self.exchange = exchange
        answerComplete = false
        framer = nil
        let requestBody = body
        body = []
        headStarted = 0
        // Nothing is read while the answer is awaited or sent, which for a held stream is minutes:
        // an empty read buffer goes back now rather than when the answer is done.
        readBuffer.releaseIfEmpty()
        loop.server.handler(head, requestBody, ResponseWriter(context: exchange))
        serviceExchange(now: now)
    }

    // MARK: Answers

    /// The exchange has news (an answer, stream bytes, its end): send what there is.
    func serviceExchange(now: Int64) {
        guard !closed, let exchange else { return }
        if framer == nil && !answerComplete {
            guard let answer = exchange.takeAnswer() else {
                setWaiting(true)
                return
            }
            setWaiting(false)
            writeHead(answer)
        }
        if framer != nil && !answerComplete { pullStream(exchange) }
        flush(now: now)
    }

    private var requestDescription: ResponseHeadWriter.Request {
        let closes = (head.map { requestCloses($0) } ?? true) || loop.server.closesConnections.load(ordering: .relaxed)
        return ResponseHeadWriter.Request(
            version: head?.version == .http10 ? .http10 : .http11, isHead: isHeadRequest, closesConnection: closes)
    }

    private func requestCloses(_ head: HTTPRequestHead) -> Bool {
        let connection = head.headers(named: "connection")
        if head.version == .http10 {
            return !connection.contains { HTTPBytes.containsIgnoringCase($0, Array("keep-alive".utf8)) }
        }
        return connection.contains { HTTPBytes.containsIgnoringCase($0, Array("close".utf8)) }
    }

    /// The application's fields as the head writer takes them. An empty field (legal, RFC 9110
    /// §5.5) carries nothing, so it is left out rather than sent as `Name: `.
    private static func fields(_ headers: [(String, String)]) -> [(name: String, value: String)] {
        headers.compactMap { $0.1.isEmpty ? nil : (name: $0.0, value: $0.1) }
    }

    private static let internalErrorBody = Array(#"{"error":"internal_error"}"#.utf8)
    private static let internalErrorFields: [(name: String, value: String)] = [
        ("Content-Type", "application/json"), ("Keyward-Error", "internal_error"),
    ]

    private func writeHead(_ answer: EngineExchange.Answer) {
        let date = loop.currentDate()
        switch answer {
        case .complete(let status, let headers, let body):
            let fields = Self.fields(headers)
            let written: ResponseHeadWriter.Written
            var bodyToSend = body
            switch ResponseHeadWriter.write(status: status, fields: fields, bodyLength: body.count, request: requestDescription, date: date) {
            case .success(let head): written = head
            case .failure:
                bodyToSend = Self.internalErrorBody
                guard case .success(let head) = ResponseHeadWriter.write(
                    status: 500, fields: Self.internalErrorFields, bodyLength: bodyToSend.count, request: requestDescription, date: date)
                else { close(); return }
                written = head
            }
            output.append(written.bytes)
            if case .contentLength = written.framing { output.append(bodyToSend) }
            closeAfterOutput = written.closesConnection
            answerComplete = true
        case .stream(let status, let headers):
            var declared: Int?
            for (name, value) in headers where HTTPBytes.caseInsensitiveEquals(name, "content-length") {
                declared = Int(value)
            }
            var request = requestDescription
            let bodiless = isHeadRequest || status == 204 || status == 304
            // A bodiless answer to a stream of unknown length ends its connection: the producer
            // learns through onClose that nothing it writes goes out.
            if bodiless && declared == nil { request.closesConnection = true }
            let fields = Self.fields(headers)
            guard case .success(let written) = ResponseHeadWriter.write(
                status: status, fields: fields, bodyLength: declared, request: request, date: date)
            else {
                exchange?.streamAbort()
                writeHead(.complete(status: 500, headers: Self.internalErrorFields.map { ($0.name, $0.value) }, body: Self.internalErrorBody))
                return
            }
            output.append(written.bytes)
            closeAfterOutput = written.closesConnection
            if written.framing == .none {
                answerComplete = true
                cutAfterOutput = bodiless && declared == nil
            } else {
                framer = BodyFramer(written.framing)
            }
        case .awaiting, .taken:
            return
        }
    }

    /// The most stream bytes moved to the output at once; the rest stay in the stream's queue,
    /// where they count against its high-water mark.
    private static let pullLimit = 64 * 1024

    private func pullStream(_ exchange: EngineExchange) {
        guard var framer else { return }
        defer { self.framer = framer }
        while output.count < Self.pullLimit {
            let take = exchange.takeStreamBytes(limit: Self.pullLimit - output.count)
            setWaiting(take.waiting && output.isEmpty)
            var pieces: [[UInt8]] = []
            for piece in take.pieces { framer.frame(piece, into: &pieces) }
            for piece in pieces { output.append(piece) }
            if take.pieces.isEmpty || !exchange.streamQueueIsEmpty {
                if take.aborted && exchange.streamQueueIsEmpty {
                    cutAfterOutput = true
                    answerComplete = true
                } else if take.finished && exchange.streamQueueIsEmpty {
                    switch framer.finish() {
                    case .complete(let last): output.append(last)
                    case .truncated: cutAfterOutput = true
                    case .closeConnection: closeAfterOutput = true
                    }
                    answerComplete = true
                }
                if take.pieces.isEmpty { return }
            }
            if answerComplete { return }
        }
    }

    /// Sends what is queued; when it is all out, completes the answer or pulls more of the stream.
    private func flush(now: Int64) {
        while !closed {
            if !output.isEmpty {
                switch output.send(to: fd) {
                case .failed:
                    close()
                    return
                case .wouldBlock:
                    lastActivity = now
                    updateInterest()
                    return
                case .drained:
                    lastActivity = now
                }
            }
            if discarding {
                // The 413 is out: shut the sending side, so the client sees the answer end, and
                // read on until the declared body is in (RFC 9112 §9.6: a server closes in stages).
                if !sentShutdown {
                    sentShutdown = true
                    _ = shutdown(fd, Int32(SHUT_WR))
                }
                updateInterest()
                return
            }
            if closeAfterOutput && (exchange == nil || answerComplete) || cutAfterOutput {
                endAnswerAndClose()
                return
            }
            guard let exchange else {
                updateInterest()
                return
            }
            if answerComplete {
                completeExchange()
                return
            }
            guard framer != nil else {
                updateInterest()
                return
            }
            pullStream(exchange)
            if output.isEmpty && !answerComplete {
                updateInterest()
                return
            }
        }
    }

    private func endAnswerAndClose() {
        if let exchange {
            // A cut stream (aborted, truncated, or a bodiless answer to an unfinished one) is not delivered.
            exchange.connectionEnded(delivered: answerComplete && !cutAfterOutput)
            self.exchange = nil
        }
        close()
    }

    /// The answer is sent in full: the connection reads the next request, or closes.
    private func completeExchange() {
        exchange?.connectionEnded(delivered: true)
        exchange = nil
        framer = nil
        answerComplete = false
        finishActive()
        head = nil
        guard codec.answerSent(closing: closeAfterOutput) else {
            close()
            return
        }
        if readBuffer.count == 0 { readBuffer.releaseIfEmpty() }
        updateInterest()
        process(now: lastActivity)
    }

    private func setWaiting(_ now: Bool) {
        guard now != waiting else { return }
        waiting = now
        loop.server.waitingExchanges.add(now ? 1 : -1, ordering: .relaxed)
    }

    private func finishActive() {
        setWaiting(false)
        if countedActive {
            countedActive = false
            loop.server.activeRequests.subtract(1, ordering: .relaxed)
        }
    }

    /// Watches the socket for what the connection can act on: reading when it reads requests (a
    /// read interest left over from the request before is kept while its answer is pending, until
    /// bytes come, `droppingIdleRead`), writing while output is queued, the client leaving always.
    private func updateInterest(droppingIdleRead: Bool = false) {
        guard !closed else { return }
        var wanted = KW_POLL_RDHUP
        if isReading || (!droppingIdleRead && exchange != nil && interest & KW_POLL_IN != 0) { wanted |= KW_POLL_IN }
        if !output.isEmpty { wanted |= KW_POLL_OUT }
        if wanted != interest {
            interest = wanted
            loop.poller.modify(fd, interest: wanted, token: token)
        }
    }

    // MARK: Time

    /// The connection's deadline (milliseconds, monotonic), nil when none runs: a request waiting
    /// for its answer, or a stream waiting for its producer, does not time out.
    func deadline(timeoutMilliseconds: Int64) -> Int64? {
        if discarding { return lastActivity + EngineLoop.discardIdleMilliseconds }
        guard timeoutMilliseconds > 0 else { return nil }
        if exchange != nil {
            return output.isEmpty ? nil : lastActivity + timeoutMilliseconds
        }
        // A head must be complete within the timeout of its first byte (a slowloris is cut
        // however steadily it trickles); between requests and in a body, silence is what counts.
        if codec.state == .readingHead && codec.requestInProgress && headStarted > 0 {
            return headStarted + timeoutMilliseconds
        }
        return lastActivity + timeoutMilliseconds
    }

    // MARK: Closing

    /// Ends the connection: the exchange learns it was not delivered, a body in progress is
    /// reported as abandoned (499), the socket is closed.
    func close() {
        guard !closed else { return }
        closed = true
        if let refusal = codec.clientClosed(), head != nil {
            loop.server.onRefusal?(HTTPRequestRefusal(
                status: refusal.status, code: refusal.code, reason: refusal.reason, remoteAddress: remoteAddress))
        }
        exchange?.connectionEnded(delivered: false)
        exchange = nil
        finishActive()
        output.removeAll()
        loop.poller.remove(fd)
        // Bytes left unread would make close() send a reset, which can destroy the answer just sent
        // before the client reads it: read what is there first (non-blocking, bounded).
        var scratch = [UInt8](repeating: 0, count: 4096)
        var rounds = 0
        while rounds < 16, recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 { rounds += 1 }
        Glibc.close(fd)
        loop.connectionClosed(self)
    }
}
