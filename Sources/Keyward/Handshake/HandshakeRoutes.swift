import HTTPServer
import Store

/// The handshake routes behind one gate (POST only, the per-client-IP token bucket): the
/// challenge, the three handshakes and the Android refresh, each answering 501 when its platform
/// is not configured.
struct HandshakeRoutes: Sendable {
    let challenges: Challenges
    let grants: SessionGrants
    let clientLimiter: ClientRateLimiter
    /// The publishable app keys required, nil when not required.
    let appKeys: AppKeySet?
    /// One token bucket per app key name.
    let appKeyLimiter: ClientRateLimiter
    let time: any TimeSource
    let finisher: RequestFinisher
    /// Runs the challenge and iOS handshakes (store calls, attestation checks) off the loop.
    let store: AsyncStore
    /// Nil when iOS is not configured.
    let iosAttest: IOSAttestHandshake?
    let iosAssert: IOSAssertHandshake?
    /// Nil when Android is not configured.
    let android: AndroidAttestHandshake?
    /// `/v1/refresh`, nil without Android.
    let refresh: AndroidRefresh?
    /// Where standard-mode Android handshakes wait on Google; nil without Android.
    let blockingWork: BlockingExecutor?
    /// Where iOS attestations wait on Apple's DeviceCheck; nil when DeviceCheck is off.
    let deviceCheckWork: BlockingExecutor?

    /// Google calls of Android handshakes running at once, and waiting beyond those (then 503).
    static let androidThreads = 8
    static let androidQueueLimit = 256

    /// Answers `route` (one of the handshake routes); the Android one from the blocking executor.
    /// - Throws: the refusal that ends the request: `method_not_allowed`, `rate_limited`,
    ///   `not_implemented`, or any of the handshake's own.
    func handle(_ route: Route, _ head: HTTPRequestHead, body: [UInt8], writer: ResponseWriter, record: RequestRecord) throws(APIError) {
        try admit(head, record)
        switch route {
        case .challenge:
            let challenges = self.challenges
            offLoop("challenge", writer: writer, record: record) { () throws(APIError) in try challenges.issue(record: record) }
        case .attestIOS:
            guard let iosAttest else { throw APIError(.notImplemented, reason: "ios_not_configured") }
            if let deviceCheckWork {
                // DeviceCheck waits on Apple: the whole handshake (its store calls too) runs on the
                // DeviceCheck executor's thread, off the loop and off the store executor's pool.
                try runBlocking(iosAttest, on: deviceCheckWork, body: body, record: record, writer: writer)
            } else {
                let (challenges, grants) = (self.challenges, self.grants)
                offLoop("attest_ios", writer: writer, record: record) { () throws(APIError) in
                    try iosAttest.run(body: body, record: record, challenges: challenges, grants: grants)
                }
            }
        case .assertIOS:
            guard let iosAssert else { throw APIError(.notImplemented, reason: "ios_not_configured") }
            let (challenges, grants) = (self.challenges, self.grants)
            offLoop("assert_ios", writer: writer, record: record) { () throws(APIError) in
                try iosAssert.run(body: body, record: record, challenges: challenges, grants: grants)
            }
        case .attestAndroid:
            guard let android, let blockingWork else { throw APIError(.notImplemented, reason: "android_not_configured") }
            try runBlocking(android, on: blockingWork, body: body, record: record, writer: writer)
        case .refresh:
            guard let refresh else { throw APIError(.notImplemented, reason: "android_not_configured") }
            let grants = self.grants
            offLoop("refresh", writer: writer, record: record) { () throws(APIError) in
                try refresh.run(body: body, record: record, grants: grants)
            }
        default:
            throw APIError(.notFound, reason: "route_unknown")
        }
    }

    /// The gate: the publishable app key first (when required; before any other work, so a
    /// scanner costs one comparison per configured key), `POST` only, the app key's token bucket,
    /// and the per-client-IP token bucket.
    private func admit(_ head: HTTPRequestHead, _ record: RequestRecord) throws(APIError) {
        let app = try appKeyName(head, record)
        guard head.method == "POST" else { throw .methodNotAllowed(allow: "POST") }
        if let app {
            if let retryAfter = appKeyLimiter.acquire(address: app, nowMillis: time.nowMillis()) {
                record.note(.appKey(app: app, outcome: "rate_limited"))
                record.note(.rateLimited(.appKey))
                throw .rateLimited(reason: "app_key_limited", retryAfterSeconds: retryAfter)
            }
            record.note(.appKey(app: app, outcome: "ok"))
        }
        if let retryAfter = clientLimiter.acquire(address: record.limiterKey, nowMillis: time.nowMillis()) {
            record.note(.rateLimited(.handshakeIP))
            throw .rateLimited(reason: "client_ip_limited", retryAfterSeconds: retryAfter)
        }
    }

    /// The name of the request's publishable app key, nil when none is required.
    /// - Throws: `app_key_invalid` (`app_key_missing`, `app_key_unknown`: absent, repeated, over
    ///   128 bytes or not listed).
    private func appKeyName(_ head: HTTPRequestHead, _ record: RequestRecord) throws(APIError) -> String? {
        guard let appKeys else { return nil }
        guard let presented = head.onlyHeader("x-keyward-app-key"), presented.utf8.count <= 128,
              let app = appKeys.name(of: presented)
        else {
            record.note(.appKey(app: "-", outcome: "invalid"))
            throw APIError(.appKeyInvalid, reason: head.header("x-keyward-app-key") == nil ? "app_key_missing" : "app_key_unknown")
        }
        record.update { $0.app = app }
        return app
    }

    /// Runs a handshake's store calls and checks on the store executor and answers with its JSON
    /// or its error; past the store deadline (or with the queue full), 503 with `Retry-After`.
    private func offLoop(
        _ operation: String, writer: ResponseWriter, record: RequestRecord, _ work: @escaping @Sendable () throws(APIError) -> String
    ) {
        let finisher = self.finisher
        store.run(operation, { _ in
            do throws(APIError) { return Result<String, APIError>.success(try work()) } catch { return .failure(error) }
        }) { result in
            switch result {
            case .success(.success(let json)): finisher.respondJSON(writer, record, status: 200, json)
            case .success(.failure(let error)): finisher.respondError(writer, record, error)
            case .failure(let error): finisher.respondError(writer, record, StoreFailure.apiError(operation, error, record: record))
            }
        }
    }

    /// Runs a handshake that may block (standard mode calls Google) on `executor`; the connection
    /// stays suspended until the writer answers from there.
    /// - Throws: `unavailable` `handshake_queue_full` when the executor's queue is full.
    private func runBlocking(
        _ handshake: some Handshake, on executor: BlockingExecutor, body: [UInt8], record: RequestRecord, writer: ResponseWriter
    ) throws(APIError) {
        let (finisher, challenges, grants) = (self.finisher, self.challenges, self.grants)
        let accepted = executor.submit {
            do throws(APIError) {
                finisher.respondJSON(writer, record, status: 200, try handshake.run(body: body, record: record, challenges: challenges, grants: grants))
            } catch {
                finisher.respondError(writer, record, error)
            }
        }
        guard accepted else { throw .unavailable(reason: "handshake_queue_full") }
    }
}
