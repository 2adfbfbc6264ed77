import AppAttest
import DeviceSimulator
import Foundation
import Keyward
import HTTPServer
import KeywardCrypto
import ProviderRegistry
import Sessions
import Store
import Upstream

/// A whole Keyward on loopback — SQLite store in a temporary folder, a generated session key, a
/// test App Attest trust anchor — for the demo, the end-to-end tests and benchmarks.
///
/// This is the only place a test anchor is handed to the service; `keyward serve` cannot do it,
/// whatever its configuration says.
public final class LocalDeployment: Sendable {
    /// The Apple Team ID of the demo App ID (10 characters, as Apple issues them).
    public static let teamID = "DEMOTEAM01"
    /// The bundle ID of the demo App ID: the service accepts `DEMOTEAM01.dev.keyward.demo`, development.
    public static let bundleID = "dev.keyward.demo"

    /// The deployment's temporary folder (`$TMPDIR/keyward-<12 hex>`): `providers.toml` and the
    /// SQLite file. `shutdown()` removes it.
    public let directory: String
    /// The store the service uses (after `wrapStore`), so tests can inspect or seed it.
    public let store: any Store
    /// The generated App Attest root and intermediate, valid from a day ago for a year.
    public let anchor: TestTrustAnchor
    /// Both listeners on 127.0.0.1, ephemeral ports, already started.
    public let server: KeywardServer
    /// Every log line the service wrote (tests check, e.g., that no secret was logged).
    public let logSink: MemoryLogSink
    /// The service's clock, as passed in.
    public let time: any TimeSource
    /// The generated P-256 session signing key (the only key of the set; none retired).
    public let sessionKey: ECPrivateKey
    /// The libcurl client the service uses upstream; `shutdown()` stops it.
    public let upstream: UpstreamClient

    /// - Parameters:
    ///   - providersTOML: the text of `providers.toml` (written into the deployment's folder).
    ///   - secrets: secret name → value, as the environment would carry them.
    ///   - settings: adjusts the service settings (Apple is preset to the demo App ID, development).
    ///   - time: the service's clock (tests pin it).
    ///   - store: a store URL; a fresh SQLite file in the deployment's folder when nil.
    ///   - wrapStore: wraps the store the service uses (tests put a failing store in front).
    ///   - trustAppleRoot: verify against Apple's real root instead of the test anchor (replaying
    ///     attestations captured from real devices).
    ///   - shards: the public listener's event loops, as `serve` runs them (see `Shard`), at least 1.
    ///   - sessionKeys: reads the session key set, at start and on each `server.reload()` (as
    ///     `serve` reads its key files on SIGHUP); nil: one generated key, never reloaded.
    ///   - receiptRoot: the App Attest receipts' anchor (a `TestReceiptSigner`'s root); nil: Apple Root CA - G3.
    ///   - anchor: the test App Attest anchor to trust; nil: a new one. Two deployments given one
    ///     anchor accept each other's simulated devices (several instances of one service).
    ///   - deviceCheck: Apple's DeviceCheck client (a fake Apple's in tests); nil: DeviceCheck off.
    ///   - android: builds the Android handshake from the deployment's upstream client; nil: Android off.
    /// - Throws: whatever the first failing step throws: a Foundation file error (folder,
    ///   `providers.toml`), `StoreError`, `CryptoError` (anchor, key), the registry's load error,
    ///   `ProviderTableError` (a secret not in `secrets`), `SessionError`, `HTTPServerError` (bind).
    public init(
        providersTOML: String,
        secrets: [String: String],
        settings adjust: (inout ServiceSettings) -> Void = { _ in },
        time: any TimeSource = SystemTimeSource(),
        store storeURL: String? = nil,
        wrapStore: (any Store) -> any Store = { $0 },
        trustAppleRoot: Bool = false,
        shards: Int = 2,
        sessionKeys readKeys: (@Sendable () throws -> SessionKeySet)? = nil,
        anchor sharedAnchor: TestTrustAnchor? = nil,
        deviceCheck: DeviceCheckClient? = nil,
        receiptRoot: X509Certificate? = nil,
        android: ((UpstreamClient) throws -> AndroidHandshake)? = nil
    ) throws {
        directory = FileManager.default.temporaryDirectory.path + "/keyward-" + Hex.encode(SecureRandom.bytes(6))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let providersPath = directory + "/providers.toml"
        try providersTOML.write(toFile: providersPath, atomically: true, encoding: .utf8)

        self.time = time
        let opened = try openStore(url: storeURL ?? "sqlite://\(directory)/keyward.db")
        let store = wrapStore(opened)
        self.store = store
        // As `serve` does: the backend's own admissions over the opened store, or over a SQLite
        // store handed in instead (one opened with other options, e.g. a page cap); a wrapped store
        // (a test double) keeps the wrapper's view by running everything through it.
        let asyncStore: AsyncStore
        if opened as AnyObject === store as AnyObject || store is SQLiteStore {
            let limited: Result<AsyncStore, StoreError>
            do { limited = .success(try AsyncStore(store: store, nowMillis: time.nowMillis())) } catch { limited = .failure(error) }
            switch limited {
            case .success(let ready): asyncStore = ready
            case .failure(let error) where error.reason == "sqlite_limits_locked":
                // A second deployment on one SQLite file (tests of several instances): `serve`
                // refuses this; here both share the store's exact sliding log through the file.
                asyncStore = AsyncStore(executorFor: store)
            case .failure(let error): throw error
            }
        } else {
            asyncStore = AsyncStore(executorFor: store)
        }
        let nowSeconds = time.nowSeconds()
        anchor = try sharedAnchor ?? TestTrustAnchor.generate(validFrom: nowSeconds - 86_400, validUntil: nowSeconds + 365 * 86_400)
        let keys: SessionKeySet
        if let readKeys {
            keys = try readKeys()
            sessionKey = keys.activeKey
        } else {
            sessionKey = try ECPrivateKey.generate(.p256)
            keys = try SessionKeySet(active: (kid: SessionKeySet.thumbprintKID(for: sessionKey.publicKey), key: sessionKey), verifyOnly: [])
        }

        let secretSource = SecretSource(environment: secrets)
        let registry = try ProviderRegistry.load(path: providersPath)
        let table = ProviderTable(try ProviderTable.resolve(registry, secrets: secretSource))

        var serviceSettings = ServiceSettings(
            apple: AppleSettings(teamID: LocalDeployment.teamID, bundleIDs: [LocalDeployment.bundleID], environment: .development))
        adjust(&serviceSettings)
        logSink = MemoryLogSink()
        let upstream = UpstreamClient()
        self.upstream = upstream
        let service = try KeywardService(
            settings: serviceSettings, store: store, sessionKeys: keys, providers: table, upstream: upstream, time: time,
            logger: Logger(sink: logSink, time: time), metrics: Metrics(), android: try android?(upstream), asyncStore: asyncStore,
            deviceCheck: deviceCheck, appleRoot: trustAppleRoot ? AppleAppAttestationRoot.certificate : anchor.root,
            receiptRoot: receiptRoot ?? AppleRootCAG3.certificate)
        server = KeywardServer(
            service: service,
            publicListener: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
            adminListener: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
            reloadProviders: {
                let registry = try ProviderRegistry.load(path: providersPath)
                return try ProviderTable.resolve(registry, secrets: secretSource)
            },
            reloadSessionKeys: readKeys,
            shards: shards)
        try server.start()
    }

    /// `http://127.0.0.1:<port>` of the public listener.
    public var baseURL: String { "http://127.0.0.1:\(server.port)" }
    /// `http://127.0.0.1:<port>` of the admin listener.
    public var adminURL: String { "http://127.0.0.1:\(server.adminPort ?? 0)" }
    /// The service behind the listeners (settings, metrics, store).
    public var service: KeywardService { server.service }

    /// A new simulated iPhone whose App Attest key chains to this deployment's test anchor.
    /// - Throws: `CryptoError` if key generation fails.
    public func makeDevice() throws -> SimulatedAppleDevice {
        try SimulatedAppleDevice(anchor: anchor, teamID: LocalDeployment.teamID, bundleID: LocalDeployment.bundleID, environment: .development)
    }

    /// A session for an already registered device, signed with this deployment's key (what
    /// `keyward sessions mint` does against a real one). Returns the token, a JWT in JWS compact form
    /// (RFC 7515 §7.1), ES256, valid for the service's session TTL (seconds) from `time`'s now.
    /// - Throws: `SessionError` (empty device id, signing failure).
    public func mintSession(deviceID: String, platform: SessionPlatform) throws -> String {
        let keys = try SessionKeySet(active: (kid: SessionKeySet.thumbprintKID(for: sessionKey.publicKey), key: sessionKey), verifyOnly: [])
        let issuer = try SessionIssuer(keys: keys, issuer: service.settings.issuer, ttlSeconds: service.settings.sessionTTLSeconds)
        return try issuer.issue(deviceID: deviceID, platform: platform, now: time.nowSeconds()).token
    }

    /// Rewrites `providers.toml` (then call `server.reload()`, as SIGHUP would).
    /// - Throws: a Foundation file error when the file cannot be written.
    public func writeProviders(_ text: String) throws {
        try text.write(toFile: directory + "/providers.toml", atomically: true, encoding: .utf8)
    }

    /// Stops the listeners and the upstream client, and removes the folder.
    public func shutdown() {
        server.stop()
        service.asyncStore.shutdown()
        upstream.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
