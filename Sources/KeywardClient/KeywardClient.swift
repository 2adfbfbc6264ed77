import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The app side of Keyward: attests the device, keeps a session, and calls providers through
/// `/p/<provider>/<path>`.
///
/// - The first run generates an App Attest key and attests it; later runs assert with the stored key.
/// - The session is cached and renewed `refreshMarginSeconds` before it expires; concurrent callers
///   that need a session share one handshake.
/// - A request Keyward itself refuses with 401 `session_invalid` is sent once more after a new
///   handshake. A provider's own answer, whatever its status, is returned as is: Keyward's refusals
///   carry the `Keyward-Error` field and relayed answers never do.
/// - `key_unknown` from the server, or the platform's invalid-key error, makes a new key.
/// - Requests to providers in ``Configuration/assertedProviders`` are signed (per-request
///   assertion) and sent one at a time, so the key's counter reaches the server in order.
public final class KeywardClient: Sendable {
    /// Where Keyward is and how the client behaves.
    public struct Configuration: Sendable {
        /// Keyward's public origin, e.g. `https://keyward.example.com` (a path prefix is kept).
        public var baseURL: URL
        /// Providers configured with `require_assertion = true` on the server: their requests are signed.
        public var assertedProviders: Set<String>
        /// A session is renewed when fewer than this many seconds remain (default 60).
        public var refreshMarginSeconds: Int64
        /// The device's clock (tests pin it): session expiry and `X-Keyward-Timestamp` read it.
        public var clock: @Sendable () -> Date

        /// - Parameters: as the properties.
        public init(
            baseURL: URL, assertedProviders: Set<String> = [], refreshMarginSeconds: Int64 = 60,
            clock: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.baseURL = baseURL
            self.assertedProviders = assertedProviders
            self.refreshMarginSeconds = refreshMarginSeconds
            self.clock = clock
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    let attestation: any AppAttestationService
    let keyStore: any KeyIDStore
    let transport: StreamingTransport
    let sessions = SessionCache()
    let signing = SigningGate()

    /// - Parameters:
    ///   - configuration: Keyward's origin and the client's policy.
    ///   - attestation: the device's attestation service (`DeviceCheckAttestationService()` on Apple devices).
    ///   - keyStore: where the key id lives between launches (`KeychainKeyIDStore()` on Apple devices).
    ///   - sessionConfiguration: the `URLSession` configuration: connections per host, and
    ///     `timeoutIntervalForRequest`, the longest silence between two pieces of an answer (60 s by
    ///     default; raise it for event streams that pause longer).
    public init(
        configuration: Configuration, attestation: any AppAttestationService, keyStore: any KeyIDStore,
        sessionConfiguration: URLSessionConfiguration = .ephemeral
    ) {
        self.configuration = configuration
        self.attestation = attestation
        self.keyStore = keyStore
        transport = StreamingTransport(configuration: sessionConfiguration)
    }

    deinit { transport.invalidate() }

    // MARK: - Calls

    /// Sends `request` through Keyward and returns the provider's whole answer.
    /// - Returns: the body and the response, whatever the provider's status (a provider's 401 is returned, not thrown).
    /// - Throws: ``KeywardError/refused(_:)`` when Keyward itself refused (with `Retry-After` on 429
    ///   and 503); ``KeywardError/unsupportedDevice``; transport and attestation errors.
    public func send(_ request: ProviderRequest) async throws -> (Data, HTTPURLResponse) {
        let answer = try await exchange(request)
        var body = Data()
        for try await chunk in answer.body { body.append(chunk) }
        return (body, answer.response)
    }

    /// Sends `request` and returns as soon as the provider's head arrives; the body (or its
    /// server-sent events) follows on the returned stream as each piece arrives. Stopping the
    /// iteration cancels the transfer; so does releasing the client.
    /// - Throws: as ``send(_:)``, for everything before the head; body errors come on the stream.
    public func stream(_ request: ProviderRequest) async throws -> KeywardStream {
        let answer = try await exchange(request)
        return KeywardStream(response: answer.response, bytes: answer.body)
    }

    /// A valid session, from the cache or a new handshake (for apps that call Keyward themselves).
    /// - Throws: as the handshake: ``KeywardError``.
    public func session() async throws -> KeywardSession {
        try await sessions.valid(now: nowSeconds(), marginSeconds: configuration.refreshMarginSeconds) { [self] in
            try await handshake()
        }
    }

    /// Forgets the session and the stored key id: the next call attests a new key.
    /// - Throws: ``KeywardError/keyStoreFailed(_:)``.
    public func resetKey() async throws {
        await sessions.clear()
        try deleteStoredKey()
    }

    /// The request with its session; a Keyward `session_invalid` renews the session and sends once more.
    func exchange(_ request: ProviderRequest) async throws -> StreamedAnswer {
        try request.validate()
        let signed = configuration.assertedProviders.contains(request.provider)
        var retried = false
        while true {
            let current = try await session()
            let answer: StreamedAnswer
            if signed {
                do {
                    answer = try await signing.withGate { [self] in
                        try await transport.start(try signedRequest(request, session: current))
                    }
                } catch AttestationServiceError.invalidKey where !retried {
                    // The key is gone from this device (the app was restored onto another one).
                    // Dropping the session makes the next handshake find that out too and attest
                    // a new key, once for all callers (it runs single flight); then send once more.
                    retried = true
                    await sessions.invalidate(token: current.token)
                    continue
                } catch {
                    throw Self.mapped(error)
                }
            } else {
                answer = try await transport.start(try urlRequest(request, session: current))
            }
            guard let refusal = Self.refusal(answer.response) else { return answer }
            Self.discard(answer)
            if refusal.code == .sessionInvalid && !retried {
                retried = true
                await sessions.invalidate(token: current.token)
                continue
            }
            throw KeywardError.refused(refusal)
        }
    }

    func urlRequest(_ request: ProviderRequest, session: KeywardSession) throws -> URLRequest {
        var text = configuration.baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += request.proxyPath
        if let query = request.query, !query.isEmpty { text += "?" + query }
        guard let url = URL(string: text) else { throw KeywardError.invalidRequest("path or query does not form a URL") }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.setValue("Bearer " + session.token, forHTTPHeaderField: "Authorization")
        if !request.body.isEmpty { urlRequest.httpBody = request.body }
        return urlRequest
    }

    /// The request with `X-Keyward-Timestamp` and `X-Keyward-Assertion` over its clientData.
    /// - Throws: the attestation service's error as it threw it (mapped by the caller).
    func signedRequest(_ request: ProviderRequest, session: KeywardSession) async throws -> URLRequest {
        var urlRequest = try urlRequest(request, session: session)
        guard let keyID = session.keyID else { throw KeywardError.attestationServiceFailed("no attested key") }
        let timestamp = String(nowSeconds())
        let clientDataHash = RequestClientData.hash(
            method: request.method, path: request.proxyPath, query: request.query, body: request.body, timestamp: timestamp)
        // The platform's own error goes up unmapped: `invalidKey` makes the caller attest a new key.
        let assertion = try await attestation.generateAssertion(keyID, clientDataHash: clientDataHash)
        urlRequest.setValue(timestamp, forHTTPHeaderField: "X-Keyward-Timestamp")
        urlRequest.setValue(assertion.base64EncodedString(), forHTTPHeaderField: "X-Keyward-Assertion")
        return urlRequest
    }

    // MARK: - Handshake

    /// First run: a new key, attested. Later runs: an assertion with the stored key; a key the
    /// platform or the server no longer knows is replaced by a new attested one.
    func handshake() async throws -> KeywardSession {
        guard attestation.isSupported else { throw KeywardError.unsupportedDevice }
        if let keyID = try storedKey() {
            do {
                return try await signing.withGate { [self] in try await assertKey(keyID) }
            } catch where Self.needsNewKey(after: error) {
                try deleteStoredKey()
            } catch {
                throw Self.mapped(error)
            }
        }
        let keyID = try await attestationCall { try await self.attestation.generateKey() }
        let challenge = try await fetchChallenge()
        let attestationObject = try await attestationCall {
            try await self.attestation.attestKey(keyID, clientDataHash: challenge.clientDataHash)
        }
        let session = try await postSession(
            "/v1/attest/ios",
            ["key_id": keyID, "attestation": attestationObject.base64EncodedString(), "challenge": challenge.text], keyID: keyID)
        do { try keyStore.saveKeyID(keyID) } catch { throw Self.keyStoreError(error) }
        return session
    }

    /// Whether the handshake should give up the stored key and attest a new one: the server says it
    /// does not know the key (`key_unknown`), or the platform says the key is invalid.
    static func needsNewKey(after error: Error) -> Bool {
        switch error {
        case AttestationServiceError.invalidKey: true
        case KeywardError.refused(let refusal): refusal.code == .keyUnknown
        default: false
        }
    }

    func assertKey(_ keyID: String) async throws -> KeywardSession {
        let challenge = try await fetchChallenge()
        // The raw platform error stays visible to `needsNewKey`; others are mapped afterwards.
        let assertion = try await attestation.generateAssertion(keyID, clientDataHash: challenge.clientDataHash)
        return try await postSession(
            "/v1/assert/ios", ["key_id": keyID, "assertion": assertion.base64EncodedString(), "challenge": challenge.text],
            keyID: keyID)
    }

    struct Challenge {
        /// As the server sent it (base64url): echoed back unchanged.
        let text: String
        /// SHA-256 of the 32 decoded bytes.
        let clientDataHash: Data
    }

    private struct ChallengeBody: Decodable {
        let challenge: String
    }

    private struct SessionBody: Decodable {
        let token: String
        let expires_at: Int64
    }

    func fetchChallenge() async throws -> Challenge {
        let data = try await postJSON("/v1/challenge", nil)
        guard let body = try? JSONDecoder().decode(ChallengeBody.self, from: data),
              let hash = HandshakeEncoding.clientDataHash(challenge: body.challenge)
        else { throw KeywardError.malformedAnswer("challenge") }
        return Challenge(text: body.challenge, clientDataHash: hash)
    }

    func postSession(_ path: String, _ fields: [String: String], keyID: String) async throws -> KeywardSession {
        let data = try await postJSON(path, fields)
        guard let body = try? JSONDecoder().decode(SessionBody.self, from: data) else { throw KeywardError.malformedAnswer("session") }
        return KeywardSession(token: body.token, expiresAt: body.expires_at, keyID: keyID)
    }

    /// POSTs a JSON object (or nothing) to a handshake route and returns the 200 body.
    /// - Throws: ``KeywardError/refused(_:)`` for any other status.
    func postJSON(_ path: String, _ fields: [String: String]?) async throws -> Data {
        var text = configuration.baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text + path) else { throw KeywardError.invalidRequest("base URL") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        if let fields {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: fields)
        }
        let answer = try await transport.start(request)
        var body = Data()
        for try await chunk in answer.body { body.append(chunk) }
        guard answer.response.statusCode == 200 else {
            throw KeywardError.refused(Self.refusal(answer.response) ?? Self.refusal(status: answer.response, body: body))
        }
        return body
    }

    // MARK: - Helpers

    /// Keyward's own refusal, told by its `Keyward-Error` field; nil for a relayed answer.
    static func refusal(_ response: HTTPURLResponse) -> KeywardRefusal? {
        guard let code = response.value(forHTTPHeaderField: "Keyward-Error") else { return nil }
        return KeywardRefusal(
            code: KeywardErrorCode(code: code), status: response.statusCode,
            retryAfterSeconds: response.value(forHTTPHeaderField: "Retry-After").flatMap { Int($0) },
            requestID: response.value(forHTTPHeaderField: "X-Request-Id"))
    }

    /// A handshake refusal without the field (a front such as nginx answered): the body's code if any.
    static func refusal(status response: HTTPURLResponse, body: Data) -> KeywardRefusal {
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        let code = object?["error"] as? String ?? "http_\(response.statusCode)"
        return KeywardRefusal(
            code: KeywardErrorCode(code: code), status: response.statusCode,
            retryAfterSeconds: response.value(forHTTPHeaderField: "Retry-After").flatMap { Int($0) },
            requestID: response.value(forHTTPHeaderField: "X-Request-Id"))
    }

    /// Stops reading an answer the caller will not see.
    static func discard(_ answer: StreamedAnswer) {
        Task { for try await _ in answer.body {} }
    }

    func nowSeconds() -> Int64 { Int64(configuration.clock().timeIntervalSince1970.rounded(.down)) }

    func storedKey() throws -> String? {
        do { return try keyStore.loadKeyID() } catch { throw Self.keyStoreError(error) }
    }

    func deleteStoredKey() throws {
        do { try keyStore.deleteKeyID() } catch { throw Self.keyStoreError(error) }
    }

    static func keyStoreError(_ error: Error) -> KeywardError {
        (error as? KeywardError) ?? .keyStoreFailed(String(describing: type(of: error)))
    }

    /// Runs a call into the attestation service, mapping its errors to ``KeywardError``.
    func attestationCall<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw Self.mapped(error) }
    }

    /// An attestation service's error in ``KeywardError`` terms (a ``KeywardError`` stays as it is).
    static func mapped(_ error: Error) -> KeywardError {
        switch error {
        case let error as KeywardError: error
        case AttestationServiceError.unsupported: .unsupportedDevice
        case AttestationServiceError.invalidKey: .attestationServiceFailed("invalid key")
        case AttestationServiceError.failed(let text): .attestationServiceFailed(text)
        default: .attestationServiceFailed(String(describing: type(of: error)))
        }
    }
}
