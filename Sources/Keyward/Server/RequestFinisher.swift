import HTTPServer

/// The last phase of every request on the public listener: its one access-log line and its
/// metrics, whatever the outcome (answered, refused by a phase or by the HTTP layer, upstream
/// error, client gone, cut by a stop). ``finish(_:status:)`` is the only place either happens.
///
/// Keyward's own answers are finished before they are handed to the writer, so whoever reads an
/// answer finds its log line already written; a stream is finished when it ends.
final class RequestFinisher: Sendable {
    let logger: Logger
    let metrics: Metrics
    let time: any TimeSource
    let requestIDs = RequestIDGenerator(seed: UInt64.random(in: 0...UInt64.max))

    init(logger: Logger, metrics: Metrics, time: any TimeSource) {
        self.logger = logger
        self.metrics = metrics
        self.time = time
    }

    /// A record for a request the router is about to send down its phases: `client` as
    /// `TrustedProxies` worked it out, `path` without the query, `bytesIn` the body's length.
    func begin(method: String, client: IPAddress? = nil, path: String? = nil, userAgent: String = "", bytesIn: Int = 0) -> RequestRecord {
        RequestRecord(
            id: requestIDs.next(), startMillis: time.nowMillis(), method: method, client: client, path: path,
            userAgent: userAgent, bytesIn: bytesIn)
    }

    /// Writes the request's `request` line (and the `store_error` line of a store failure) and
    /// counts it: `keyward_requests_total`, the upstream head latency, and every event the phases
    /// noted. Runs once per request; later calls (a cancel racing a completion) return false.
    /// - Parameter status: the status sent, unless a phase already set one (a stream's head).
    @discardableResult
    func finish(_ record: RequestRecord, status: Int) -> Bool {
        guard record.markFinished(status: status) else { return false }
        let fields = record.snapshot
        if let store = fields.storeFailure {
            logger.storeError(operation: store.operation, reason: store.reason)
        }
        if let event = fields.securityEvent {
            var line = logger.line(event)
            line.add("request_id", record.id)
            line.addIfPresent("device", fields.deviceID)
            logger.emit(line)
        }
        var line = logger.line("request")
        line.add("request_id", record.id)
        line.add("client", record.client)
        if let method = record.method { line.add("method", method) }
        line.add("route", fields.route.rawValue)
        line.addIfPresent("path", record.path)
        line.addIfPresent("provider", fields.provider)
        line.addIfPresent("app", fields.app)
        line.addIfPresent("device", fields.deviceID)
        line.addIfPresent("platform", fields.platform?.rawValue)
        line.add("status", fields.status)
        line.addIfPresent("reason", fields.reason)
        line.add("bytes_in", record.bytesIn)
        line.add("bytes_out", fields.bytesOut)
        if let start = record.startMillis { line.add("duration_ms", time.nowMillis() - start) }
        if let upstreamStatus = fields.upstreamStatus { line.add("upstream_status", upstreamStatus) }
        if let seconds = fields.upstreamHeadSeconds { line.add("upstream_first_byte_ms", Int64((seconds * 1000).rounded())) }
        if let tokens = fields.inputTokens { line.add("input_tokens", tokens) }
        if let tokens = fields.outputTokens { line.add("output_tokens", tokens) }
        if record.method != nil { line.add("user_agent", record.userAgent) }
        logger.emit(line)

        metrics.countRequest(route: fields.route.rawValue, provider: fields.provider ?? "-", status: fields.status)
        if let seconds = fields.upstreamHeadSeconds, let provider = fields.provider {
            metrics.observeUpstreamLatency(provider: provider, seconds: seconds)
        }
        for event in fields.events ?? [] { metrics.count(event) }
        return true
    }

    /// Finishes the request, then answers `status` with a JSON body.
    func respondJSON(_ writer: ResponseWriter, _ record: RequestRecord, status: Int, _ json: String) {
        record.update { $0.bytesOut = Int64(json.utf8.count) }
        guard finish(record, status: status) else { return }
        writer.respond(
            status: status,
            headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store"), ("X-Request-Id", record.id)],
            body: Array(json.utf8))
    }

    /// Finishes the request with `error`'s reason, then answers its status and `{"error":"<code>"}`.
    func respondError(_ writer: ResponseWriter, _ record: RequestRecord, _ error: APIError) {
        record.update {
            $0.reason = error.reason
            $0.bytesOut = Int64(error.code.body.count)
        }
        guard finish(record, status: error.code.status) else { return }
        // `Keyward-Error` marks the answer as Keyward's own refusal: a client tells a 401 from Keyward
        // (renew the session) from a 401 the provider sent (relayed answers never carry it).
        var headers: [(String, String)] = [
            ("Content-Type", "application/json"), ("Cache-Control", "no-store"), ("X-Request-Id", record.id),
            (APIErrorCode.headerName, error.code.rawValue),
        ]
        // A 401 for the session names the scheme it wants (RFC 9110 §11.6.1; RFC 6750 §3), with
        // no error detail: which check failed is for the log only.
        if error.code == .sessionInvalid { headers.append(("WWW-Authenticate", "Bearer realm=\"keyward\"")) }
        headers.append(contentsOf: error.headers)
        writer.respond(status: error.code.status, headers: headers, body: error.code.body)
    }

    /// A request the HTTP layer refused before routing (framing, oversized head or body, a body
    /// the client abandoned): finished like every other, with route `refused`.
    func finishRefused(_ refusal: HTTPRequestRefusal) {
        let record = RequestRecord(id: requestIDs.next(), startMillis: nil, method: nil, client: IPAddress.parse(refusal.remoteAddress))
        record.update {
            $0.route = .refused
            $0.reason = refusal.reason
        }
        finish(record, status: refusal.status)
    }
}
