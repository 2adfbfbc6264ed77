import AppAttest
import Foundation
import HTTPServer
import KeywardCrypto
import ProviderRegistry
import Sessions
import Store
import Upstream

/// The application behind the public listener: the router, and the units it sends requests to.
///
/// | route | unit |
/// |---|---|
/// | `POST /v1/challenge` | ``HandshakeRoutes`` → ``Challenges`` |
/// | `POST /v1/attest/ios`, `POST /v1/assert/ios` | ``HandshakeRoutes`` → ``IOSAttestHandshake``, ``IOSAssertHandshake`` |
/// | `POST /v1/attest/android` | ``HandshakeRoutes`` → ``AndroidAttestHandshake``, on the ``BlockingExecutor`` |
/// | `POST /v1/refresh` | ``HandshakeRoutes`` → ``AndroidRefresh`` |
/// | `ANY /p/<provider>/…` | ``ProxyPipeline`` |
/// | `GET /healthz`, `GET /readyz` | ``Lifecycle`` |
///
/// Every request gets a ``RequestRecord`` here and ends in ``RequestFinisher/finish(_:status:)``,
/// which writes its one access-log line and counts it. Each unit is handed only what it needs.
public final class KeywardService: Sendable {
    package let settings: ServiceSettings
    let logger: Logger
    /// The counters and histogram `/metrics` renders; tests read them.
    public let metrics: Metrics
    let providers: ProviderTable
    let upstream: UpstreamClient
    let finisher: RequestFinisher
    let lifecycle: Lifecycle
    let handshakes: HandshakeRoutes
    let proxy: ProxyPipeline
    /// `GET /v1/usage`.
    let usage: UsageRoute
    /// The session keys in force, shared by the handshakes and the proxy (`replaceSessionKeys`).
    let sessionKeysInForce: SessionKeysInForce
    /// The store as requests reach it: every operation off the event loops, each with a deadline.
    public let asyncStore: AsyncStore
    /// The receipt refresh `KeywardServer` schedules, nil unless `[apple.risk]` and
    /// `[apple.devicecheck]` are both set.
    let receiptRefresh: ReceiptRefreshTask?

    /// Builds the service and its units.
    /// - Parameters:
    ///   - upstream: forwards proxied requests when ``handle(_:body:writer:upstream:)`` is given no
    ///     client of its own; every ``Shard`` hands its own, so in `serve` this one is idle.
    ///   - appleRoot: the App Attest trust anchor. Production code never passes it (Apple's pinned
    ///     root is the default); only tests and the demo hand in a test anchor.
    ///   - android: the Play Integrity handshake, nil when Android is not configured (501).
    ///   - asyncStore: how requests reach `store` (`ServiceAssembly.asyncStore`); nil: an executor
    ///     with the default `[store]` settings running the store's own calls, rate limits included.
    ///   - deviceCheck: Apple's DeviceCheck client, nil when `[apple.devicecheck]` is off (the
    ///     check then abstains). With `[apple.risk]` its key also signs the receipt refreshes.
    ///   - receiptRoot: the App Attest receipts' anchor; Apple Root CA - G3 unless a test passes its own.
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
        deviceCheck: DeviceCheckClient? = nil,
        appleRoot: X509Certificate = AppleAppAttestationRoot.certificate,
        receiptRoot: X509Certificate = AppleRootCAG3.certificate
    ) throws(SessionError) {
        let asyncStore = asyncStore ?? AsyncStore(executorFor: store)
        self.asyncStore = asyncStore
        self.settings = settings
        self.logger = logger
        self.metrics = metrics
        self.providers = providers
        self.upstream = upstream
        finisher = RequestFinisher(logger: logger, metrics: metrics, time: time)
        lifecycle = Lifecycle(store: store, asyncStore: asyncStore, time: time, logger: logger, metrics: metrics)
        let challenges = Challenges(
            store: store, time: time, length: settings.challengeLength, ttlSeconds: settings.challengeTTLSeconds)
        let keysInForce = try SessionKeysInForce(sessionKeys, issuer: settings.issuer, ttlSeconds: settings.sessionTTLSeconds)
        sessionKeysInForce = keysInForce
        let deviceStatus = DeviceStatusCache(ttlMillis: settings.revocationCheckSeconds * 1000, capacity: 100_000)
        let grants = SessionGrants(keys: keysInForce, time: time, deviceStatus: deviceStatus)
        metrics.setGateMode(settings.gateMode.rawValue)
        // The words `check-config` prints, logged once at start: a gate left open is never silent.
        if let warning = settings.gateMode.warning { logger.info("gate_not_enforcing", warning) }
        let gate = ProofGate(mode: settings.gateMode, logger: logger, metrics: metrics)
        // DeviceCheck calls wait on Apple: they run here, never on a shard's loop.
        let deviceCheckWork = deviceCheck.map { _ in
            BlockingExecutor(name: "kw-devcheck", threads: HandshakeRoutes.androidThreads, queueLimit: HandshakeRoutes.androidQueueLimit)
        }
        var deviceCheckMarker: DeviceCheckMarker?
        if let deviceCheck, let deviceCheckWork {
            deviceCheckMarker = DeviceCheckMarker(
                client: deviceCheck, store: store, executor: deviceCheckWork, metrics: metrics, logger: logger, time: time)
        }
        var assertions: DeviceAssertions?
        var iosAttest: IOSAttestHandshake?
        var iosAssert: IOSAssertHandshake?
        if let apple = settings.apple {
            let attestation = AttestationVerifier(
                teamID: apple.teamID, bundleIDs: apple.bundleIDs, environment: apple.environment, trustedRoot: appleRoot)
            let deviceAssertions = DeviceAssertions(
                verifier: AssertionVerifier(teamID: apple.teamID, bundleIDs: apple.bundleIDs), store: store, time: time)
            let risk = apple.risk.map { RiskPolicy(settings: $0, store: store) }
            iosAttest = IOSAttestHandshake(
                verifier: attestation, store: store, time: time,
                deviceCheck: deviceCheck.map {
                    DeviceCheckGate(client: $0, onFlagged: $0.settings.onFlagged, flaggedTier: $0.settings.flaggedTier, time: time)
                }, gate: gate, risk: risk)
            iosAssert = IOSAssertHandshake(assertions: deviceAssertions, gate: gate, risk: risk)
            assertions = deviceAssertions
        }
        let credentials = android.map {
            InstallCredentials(
                store: store, time: time, ttlSeconds: Int64($0.attestation.settings.credentialTTLDays) * 86_400, deviceStatus: deviceStatus)
        }
        handshakes = HandshakeRoutes(
            challenges: challenges, grants: grants,
            clientLimiter: ClientRateLimiter(ratePerSecond: settings.handshakeRatePerSecond, burst: settings.handshakeBurst),
            appKeys: settings.appKeys,
            appKeyLimiter: ClientRateLimiter(ratePerSecond: settings.appKeyRatePerSecond, burst: settings.appKeyBurst),
            time: time, finisher: finisher, store: asyncStore, iosAttest: iosAttest, iosAssert: iosAssert,
            android: android.flatMap { android in
                credentials.map { AndroidAttestHandshake(attestation: android.attestation, store: store, time: time, credentials: $0, gate: gate) }
            },
            refresh: credentials.map { AndroidRefresh(credentials: $0) },
            blockingWork: android == nil
                ? nil
                : BlockingExecutor(name: "kw-android", threads: HandshakeRoutes.androidThreads, queueLimit: HandshakeRoutes.androidQueueLimit),
            deviceCheckWork: deviceCheckWork)
        let authenticator = SessionAuthenticator(
            keys: keysInForce,
            deviceStatus: deviceStatus,
            store: store, time: time)
        let authorizer = ProxyAuthorizer(
            store: store, time: time, assertions: assertions, timestampSkewSeconds: settings.assertionTimestampSkewSeconds,
            deviceCheck: deviceCheckMarker)
        let credits = settings.spend.map { CreditGate(settings: $0, asyncStore: asyncStore, logger: logger, metrics: metrics, time: time) }
        proxy = ProxyPipeline(
            providers: providers, authenticator: authenticator, authorizer: authorizer,
            asyncStore: asyncStore, finisher: finisher, lifecycle: lifecycle, time: time,
            credits: credits,
            defaultMaxUpstreamConnections: settings.maxUpstreamConnections)
        usage = UsageRoute(
            authenticator: authenticator, authorizer: authorizer, providers: providers, asyncStore: asyncStore,
            spend: settings.spend, credits: credits, finisher: finisher, time: time)
        if let risk = settings.apple?.risk, let deviceCheck {
            let refresher = ReceiptRefresher(
                store: store, client: ReceiptRefreshClient(signer: deviceCheck, baseURL: risk.baseURL, timeoutMs: risk.timeoutMs),
                verifier: ReceiptVerifier(trustedRoot: receiptRoot), minIntervalSeconds: Int64(risk.minRefreshSeconds),
                retrySeconds: Int64(max(60, risk.refreshEverySeconds)))
            receiptRefresh = ReceiptRefreshTask(refresher: refresher, everySeconds: risk.refreshEverySeconds, metrics: metrics, logger: logger, time: time)
        } else {
            receiptRefresh = nil
        }
    }

    /// Gives every metered give-back still waiting in memory to the store now, on the calling
    /// thread (never a loop's): what a stopping server does last, and what tests call to see the
    /// store settled.
    public func flushGiveBacks() { proxy.credits?.flushGiveBacks(asyncStore.store) }

    /// Queues the waiting give-backs' flush on the store executor (the flush timer's tick).
    func flushGiveBacksSoon() { proxy.credits?.flushGiveBacksSoon() }

    /// Runs one receipt refresh pass now (what the server's timer does), when `[apple.risk]` is on.
    public func refreshReceipts() { receiptRefresh?.runOnce() }

    // MARK: - Router

    /// The largest body the server may read for a request, decided from its head before the body
    /// (bytes): the provider's `max_body_bytes` on the proxy, 64 KiB elsewhere. Over it → 413 unread.
    public func bodyLimit(for head: HTTPRequestHead) -> Int {
        if let name = ProxyPath.splitProxyRoute(head.path)?.provider,
           let provider = providers.current.registry.provider(named: name) {
            return provider.maxBodyBytes
        }
        return settings.handshakeBodyLimit
    }

    /// Answers one request from the public listener. May return before the response is complete
    /// (proxied streams finish on the upstream thread, Android handshakes on the blocking executor).
    /// - Parameter upstream: the client that forwards proxied requests: the one whose thread runs
    ///   the calling listener (see ``Shard``), else the service's own.
    public func handle(_ head: HTTPRequestHead, body: [UInt8], writer: ResponseWriter, upstream: UpstreamClient? = nil) {
        let client = settings.trustedProxies.clientAddress(
            peer: head.remoteAddress, forwardedFor: head.headers(named: "x-forwarded-for"), forwarded: head.headers(named: "forwarded"))
        let record = finisher.begin(
            method: head.method, client: client, path: head.path, userAgent: head.header("user-agent") ?? "", bytesIn: body.count)
        let route = Route(path: head.path)
        record.update { $0.route = route }
        if route == .proxy {
            proxy.run(head, body: body, writer: writer, record: record, upstream: upstream ?? self.upstream)
            return
        }
        do throws(APIError) {
            switch route {
            case .challenge, .attestIOS, .assertIOS, .attestAndroid, .refresh:
                try handshakes.handle(route, head, body: body, writer: writer, record: record)
            case .healthz:
                try requireMethod(head, "GET", "HEAD")
                finisher.respondJSON(writer, record, status: 200, "{\"status\":\"ok\"}")
            case .readyz:
                try requireMethod(head, "GET", "HEAD")
                let finisher = self.finisher
                lifecycle.checkReady(record: record) { failure in
                    if let failure { finisher.respondError(writer, record, failure) } else {
                        finisher.respondJSON(writer, record, status: 200, "{\"status\":\"ready\"}")
                    }
                }
            case .usage:
                try usage.handle(head, writer: writer, record: record)
            case .unknown, .refused, .proxy:
                throw APIError(.notFound, reason: "route_unknown")
            }
        } catch {
            finisher.respondError(writer, record, error)
        }
    }

    /// 405 with `Allow` unless the method is one of `allowed`.
    private func requireMethod(_ head: HTTPRequestHead, _ allowed: String...) throws(APIError) {
        guard allowed.contains(head.method) else {
            throw .methodNotAllowed(allow: allowed.joined(separator: ", "))
        }
    }

    // MARK: - Lifecycle

    /// Puts `keys` in force (SIGHUP): new sessions are signed with its active key, and tokens
    /// verify against its keys only. Requests already past verification are unaffected.
    /// - Throws: `SessionError` when the session TTL is outside 60–86400 s (never after `init`).
    public func replaceSessionKeys(_ keys: SessionKeySet) throws(SessionError) {
        try sessionKeysInForce.replace(with: keys)
    }

    /// Marks the start of a graceful stop: `/readyz` answers 503 so load balancers move away.
    public func beginDraining() { lifecycle.beginDraining() }

    /// Marks the end of the grace period: streams cut from now on are logged as cut by the stop.
    public func beginCutting() { lifecycle.beginCutting() }

    /// Deletes expired challenges, rate events and old budgets (`serve` calls it every minute).
    public func purgeExpired() { lifecycle.purgeExpired() }

    /// A request the HTTP layer refused before routing (framing, oversized head or body): one log
    /// line and the request counter, like every other outcome.
    public func logRefusal(_ refusal: HTTPRequestRefusal) { finisher.finishRefused(refusal) }
}
