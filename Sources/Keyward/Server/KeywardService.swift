import AppAttest
import Foundation
import HTTPServer
import KeywardCrypto
import ProviderRegistry
import Sessions
import Store
import Synchronization
import Upstream

/// The application: every request on the public listener passes through here.
///
/// Phases, in order: route → authenticate → authorize (allowlist, limits) →
/// rewrite request → upstream → rewrite response headers → stream body → log. A phase that
/// refuses throws one `APIError`; nothing later runs, and `finish` logs and counts every outcome
/// in one place.
public final class KeywardService: Sendable {
    package let settings: ServiceSettings
    let store: any Store
    /// The store as requests use it: every operation off the event loops, each with a deadline.
    public let asyncStore: AsyncStore
    let time: any TimeSource
    let logger: Logger
    /// The counters and histogram `/metrics` renders; tests read them.
    public let metrics: Metrics
    let sessionIssuer: SessionIssuer
    let sessionVerifier: SessionVerifier
    let attestationVerifier: AttestationVerifier?
    let assertionVerifier: AssertionVerifier?
    let clientLimiter: ClientRateLimiter
    let providers: ProviderTable
    let upstream: UpstreamClient
    let deviceStatus: DeviceStatusCache
    /// Set when a graceful stop begins: `/readyz` then answers 503 so load balancers move away.
    let draining = Atomic<Bool>(false)
    /// A graceful stop's grace period is over and what still runs is being cut: streams cut now are
    /// logged as cut by the stop, not as the client's doing.
    let cutting = Atomic<Bool>(false)
    let requestIDs = RequestIDGenerator(seed: UInt64.random(in: 0...UInt64.max))
    let android: AndroidHandshake?

    /// Builds the service.
    /// - Parameters:
    ///   - appleRoot: the App Attest trust anchor. Production code never passes it (Apple's pinned
    ///     root is the default); only tests and the demo hand in a test anchor.
    ///   - android: the Play Integrity handshake, nil when Android is not configured (501).
    ///   - asyncStore: how requests reach `store` (`ServiceAssembly.asyncStore`); nil: an executor
    ///     with the default `[store]` settings running the store's own calls, rate limits included.
    /// - Throws: `SessionError` when the session TTL is outside 60–86400 s.
    public init(
        settings: ServiceSettings,
        store: any Store,
        sessionKeys: SessionKeySet,
        providers: ProviderTable,
        upstream: UpstreamClient,
        time: any TimeSource,
        logger: Logger,
        metrics: Metrics,
        android: AndroidHandshake? = nil,
        asyncStore: AsyncStore? = nil,
        appleRoot: X509Certificate = AppleAppAttestationRoot.certificate
    ) throws(SessionError) {
        self.settings = settings
        self.store = store
        self.asyncStore = asyncStore ?? AsyncStore(executorFor: store)
        self.time = time
        self.logger = logger
        self.metrics = metrics
        self.providers = providers
        self.upstream = upstream
        self.android = android
        sessionIssuer = try SessionIssuer(keys: sessionKeys, issuer: settings.issuer, ttlSeconds: settings.sessionTTLSeconds)
        sessionVerifier = SessionVerifier(
            keys: sessionKeys, issuer: settings.issuer, maxTTLSeconds: settings.sessionTTLSeconds,
            leewaySeconds: 60, cacheCapacity: 100_000)
        if let apple = settings.apple {
            attestationVerifier = AttestationVerifier(
                teamID: apple.teamID, bundleIDs: apple.bundleIDs, environment: apple.environment, trustedRoot: appleRoot)
            assertionVerifier = AssertionVerifier(teamID: apple.teamID, bundleIDs: apple.bundleIDs)
        } else {
            attestationVerifier = nil
            assertionVerifier = nil
        }
        clientLimiter = ClientRateLimiter(ratePerSecond: settings.handshakeRatePerSecond, burst: settings.handshakeBurst)
        deviceStatus = DeviceStatusCache(ttlMillis: settings.revocationCheckSeconds * 1000, capacity: 100_000)
    }

    // MARK: - Route

    /// The largest body the server may read for a request, decided from its head (bytes): the
    /// provider's `max_body_bytes` on the proxy, 64 KiB elsewhere. Over it → 413 unread.
    public func bodyLimit(for head: HTTPRequestHead) -> Int {
        if let name = ProxyPath.splitProxyRoute(head.path)?.provider,
           let provider = providers.current.registry.provider(named: name) {
            return provider.maxBodyBytes
        }
        return settings.handshakeBodyLimit
    }

    /// Answers one request from the public listener. May return before the response is complete
    /// (proxied streams finish on the upstream thread).
    /// - Parameter upstream: the client that forwards proxied requests: the one whose thread runs
    ///   the calling listener (sharded serving, see ``KeywardServer``), else the service's own.
    public func handle(_ head: HTTPRequestHead, body: [UInt8], writer: ResponseWriter, upstream: UpstreamClient? = nil) {
        let context = RequestRecord(id: requestIDs.next(), startMillis: time.nowMillis(), method: head.method)
        let path = head.path
        if path.hasPrefix("/p/") {
            context.update { $0.route = "proxy" }
            proxy(head, body: body, writer: writer, context: context, upstream: upstream ?? self.upstream)
            return
        }
        do throws(APIError) {
            switch path {
            case "/v1/challenge":
                context.update { $0.route = "challenge" }
                try requireMethod(head, "POST")
                try limitClient(head)
                answerOffLoop(writer, context, operation: "challenge") { () throws(APIError) in try self.issueChallenge() }
            case "/v1/attest/ios":
                context.update { $0.route = "attest_ios" }
                try requireMethod(head, "POST")
                try limitClient(head)
                answerOffLoop(writer, context, operation: "attest_ios") { () throws(APIError) in try self.attestIOS(body: body, context: context) }
            case "/v1/assert/ios":
                context.update { $0.route = "assert_ios" }
                try requireMethod(head, "POST")
                try limitClient(head)
                answerOffLoop(writer, context, operation: "assert_ios") { () throws(APIError) in try self.assertIOS(body: body, context: context) }
            case "/v1/attest/android":
                context.update { $0.route = "attest_android" }
                try requireMethod(head, "POST")
                try limitClient(head)
                guard let android else { throw APIError(.notImplemented, reason: "android_not_configured") }
                // Standard mode calls Google: run it off the server's threads; the connection
                // stays suspended until the writer answers.
                DispatchQueue.global().async {
                    do throws(APIError) {
                        let session = try android.attest(body: body, service: self, context: context)
                        self.respondJSON(writer, context, status: 200, session)
                    } catch {
                        self.respondError(writer, context, error)
                    }
                }
            case "/healthz":
                context.update { $0.route = "healthz" }
                try requireMethod(head, "GET", "HEAD")
                respondJSON(writer, context, status: 200, "{\"status\":\"ok\"}")
            case "/readyz":
                context.update { $0.route = "readyz" }
                try requireMethod(head, "GET", "HEAD")
                checkReady { failure in
                    if let failure { self.respondError(writer, context, failure) } else {
                        self.respondJSON(writer, context, status: 200, "{\"status\":\"ready\"}")
                    }
                }
            default:
                throw APIError(.notFound, reason: "route_unknown")
            }
        } catch {
            respondError(writer, context, error)
        }
    }

    /// 405 with `Allow` unless the method is one of `allowed`.
    func requireMethod(_ head: HTTPRequestHead, _ allowed: String...) throws(APIError) {
        guard allowed.contains(head.method) else {
            throw .methodNotAllowed(allow: allowed.joined(separator: ", "))
        }
    }

    /// The per-client-IP token bucket of the handshake routes.
    func limitClient(_ head: HTTPRequestHead) throws(APIError) {
        if let retryAfter = clientLimiter.acquire(address: head.remoteAddress, nowMillis: time.nowMillis()) {
            metrics.increment("keyward_rate_limited_total", ["limit": "handshake_ip"])
            throw .rateLimited(reason: "client_ip_limited", retryAfterSeconds: retryAfter)
        }
    }

    /// `/readyz`: not draining, and the store takes a write within the operation deadline
    /// (`Store.ping`), checked off the loop. `completion` gets nil when ready.
    func checkReady(completion: @escaping @Sendable (APIError?) -> Void) {
        if draining.load(ordering: .relaxed) { return completion(.unavailable(reason: "draining")) }
        asyncStore.run("ping", { store throws(StoreError) in try store.ping() }) { result in
            if case .failure(let error) = result {
                _ = self.storeFailure("ping", error)
                completion(.unavailable(reason: "store_unreachable"))
            } else {
                completion(nil)
            }
        }
    }

    /// Runs a handshake's work (store calls, attestation checks) on the store executor and answers
    /// with its JSON or its error; past the store deadline, 503 `unavailable` with `Retry-After`.
    func answerOffLoop(
        _ writer: ResponseWriter, _ context: RequestRecord, operation: String,
        _ work: @escaping @Sendable () throws(APIError) -> String
    ) {
        asyncStore.run(operation, { _ in
            do throws(APIError) { return Result<String, APIError>.success(try work()) } catch { return .failure(error) }
        }) { result in
            switch result {
            case .success(.success(let json)): self.respondJSON(writer, context, status: 200, json)
            case .success(.failure(let error)): self.respondError(writer, context, error)
            case .failure(let error): self.respondError(writer, context, self.storeFailure(operation, error))
            }
        }
    }

    /// Maps a store failure to 503 and counts it; the store's own reason slug (`sqlite_busy`,
    /// `pg_connection`, …) goes to the log line of the request.
    func storeFailure(_ operation: String, _ error: StoreError? = nil) -> APIError {
        metrics.increment("keyward_store_errors_total", ["operation": operation])
        if let error {
            var line = logger.line("store_error")
            line.add("operation", operation)
            line.add("reason", error.reason)
            logger.emit(line)
        }
        return .unavailable(reason: "store_\(operation)_failed")
    }

    /// Marks the start of a graceful stop (see `draining`).
    public func beginDraining() { draining.store(true, ordering: .relaxed) }

    /// Marks the end of the grace period: streams cut from now on are logged as cut by the stop.
    public func beginCutting() { cutting.store(true, ordering: .relaxed) }

    /// Deletes expired challenges, rate events and old budgets (`serve` calls it every minute).
    public func purgeExpired() {
        do {
            let counts = try store.purgeExpired(nowMillis: time.nowMillis())
            if counts.challenges + counts.rateEvents + counts.budgets > 0 {
                var line = logger.line("store_purged")
                line.add("challenges", counts.challenges)
                line.add("rate_events", counts.rateEvents)
                line.add("budgets", counts.budgets)
                logger.emit(line)
            }
        } catch {
            _ = storeFailure("purge", error)
        }
    }

    // MARK: - Respond and log

    func respondJSON(_ writer: ResponseWriter, _ context: RequestRecord, status: Int, _ json: String) {
        guard context.markFinished(status: status) else { return }
        // Logged before answering, so whoever reads the answer finds its log line already written.
        log(context)
        writer.respond(
            status: status,
            headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store"), ("X-Request-Id", context.id)],
            body: Array(json.utf8))
    }

    func respondError(_ writer: ResponseWriter, _ context: RequestRecord, _ error: APIError) {
        context.update { $0.reason = error.reason }
        guard context.markFinished(status: error.code.status) else { return }
        var headers: [(String, String)] = [("Content-Type", "application/json"), ("Cache-Control", "no-store"), ("X-Request-Id", context.id)]
        headers.append(contentsOf: error.headers)
        log(context)
        writer.respond(status: error.code.status, headers: headers, body: error.code.body)
    }

    /// A request the HTTP layer refused before routing (framing, oversized head or body): one log
    /// line and the request counter, like every other outcome.
    public func logRefusal(_ refusal: HTTPRequestRefusal) {
        var line = logger.line("request")
        line.add("request_id", requestIDs.next())
        line.add("route", "refused")
        line.add("status", refusal.status)
        line.add("reason", refusal.reason)
        logger.emit(line)
        metrics.countRequest(route: "refused", provider: "-", status: refusal.status)
    }

    /// The log phase: one JSON line and the request counter, for every outcome.
    func log(_ context: RequestRecord) {
        let fields = context.snapshot
        var line = logger.line("request")
        line.add("request_id", context.id)
        line.add("method", context.method)
        line.add("route", fields.route)
        line.addIfPresent("provider", fields.provider)
        line.addIfPresent("device", fields.deviceID)
        line.addIfPresent("platform", fields.platform)
        line.add("status", fields.status)
        line.addIfPresent("reason", fields.reason)
        if fields.bytesOut > 0 { line.add("bytes_out", fields.bytesOut) }
        line.add("duration_ms", time.nowMillis() - context.startMillis)
        logger.emit(line)
        metrics.countRequest(route: fields.route, provider: fields.provider ?? "-", status: fields.status)
    }
}
