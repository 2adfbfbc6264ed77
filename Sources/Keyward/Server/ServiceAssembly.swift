import Foundation
import KeywardCrypto
import ProviderRegistry
import Sessions
import Store
import Upstream

/// Turns a validated `keyward.toml` and the secrets into the pieces of a running service.
/// Shared by `serve`, `check-config`, `migrate`, `devices` and `sessions mint`.
public enum ServiceAssembly {
    /// Internal secret names (reserved: no provider may use a `KEYWARD_` name).
    /// The active session signing key: one PKCS#8 PEM block, P-256 (ES256, RFC 7518 §3.4).
    public static let sessionKeySecret = "KEYWARD_SESSION_KEY"
    /// Keys that only verify: concatenated PEM blocks, SPKI public or PKCS#8 private; optional.
    public static let retiredSessionKeysSecret = "KEYWARD_SESSION_KEYS_RETIRED"

    /// A start-up problem: what is wrong, naming the file or secret, never a secret's value.
    public struct Problem: Error, CustomStringConvertible, Sendable {
        /// The message printed before exiting with code 1.
        public let description: String
        /// Whether trying again cannot help (a schema newer than this binary): `waitForStore` stops.
        public let isPermanent: Bool
        /// Wraps `description` as is; it must not contain a secret's value.
        public init(_ description: String, isPermanent: Bool = false) {
            self.description = description
            self.isPermanent = isPermanent
        }
    }

    /// The service settings `configuration` describes.
    public static func settings(from configuration: KeywardConfiguration) -> ServiceSettings {
        var settings = ServiceSettings(apple: configuration.apple)
        settings.issuer = configuration.sessionIssuer
        settings.sessionTTLSeconds = Int64(configuration.sessionTTLSeconds)
        settings.challengeTTLSeconds = Int64(configuration.challengeTTLSeconds)
        settings.handshakeRatePerSecond = Double(configuration.handshakePerIPPerMinute) / 60
        settings.handshakeBurst = configuration.handshakePerIPBurst
        settings.spend = configuration.spend
        settings.gateMode = configuration.gateMode
        settings.appKeyRatePerSecond = Double(configuration.handshakePerAppKeyPerMinute) / 60
        settings.appKeyBurst = configuration.handshakePerAppKeyBurst
        settings.trustedProxies = configuration.trustedProxies
        return settings
    }

    /// Apple's DeviceCheck client when `[apple.devicecheck]` is set, with the team's private key
    /// from `KEYWARD_DEVICECHECK_KEY` (the `.p8` file: PKCS#8 PEM, P-256); else nil.
    /// - Throws: `Problem` naming the secret when it is missing or not a P-256 private key.
    public static func deviceCheck(
        _ configuration: KeywardConfiguration, secrets: SecretSource, upstream: UpstreamClient
    ) throws(Problem) -> DeviceCheckClient? {
        guard let apple = configuration.apple, let settings = apple.deviceCheck else { return nil }
        let pem: String
        do { pem = try secrets.value(DeviceCheckClient.secretName) } catch { throw Problem(error.description + " ([apple.devicecheck])") }
        guard let key = try? ECPrivateKey(pkcs8PEM: pem), key.publicKey.curve == .p256 else {
            throw Problem("secret \(DeviceCheckClient.secretName): not a P-256 private key in PEM (the .p8 file from the developer account)")
        }
        return DeviceCheckClient(teamID: apple.teamID, settings: settings, privateKey: key, http: upstream)
    }

    /// The publishable app keys from `KEYWARD_APP_KEYS` when `[handshake] require_app_key` is on,
    /// else nil (the secret is then not read).
    /// - Throws: `Problem` naming the secret (and line) when it is missing or malformed.
    public static func appKeys(_ configuration: KeywardConfiguration, secrets: SecretSource) throws(Problem) -> AppKeySet? {
        guard configuration.requireAppKey else { return nil }
        let text: String
        do { text = try secrets.value(AppKeySet.secretName) } catch { throw Problem(error.description + " ([handshake] require_app_key = true)") }
        return try AppKeySet(parsing: text)
    }

    /// The session key set: `KEYWARD_SESSION_KEY` (PKCS#8 PEM, P-256) signs; every key in
    /// `KEYWARD_SESSION_KEYS_RETIRED` (PEM blocks, public or private; an empty file holds none)
    /// still verifies, so sessions signed before a rotation live out their TTL. Key ids are RFC 7638 thumbprints.
    /// - Throws: `Problem` naming the secret that is missing or not a P-256 key.
    public static func sessionKeys(_ secrets: SecretSource) throws(Problem) -> SessionKeySet {
        let activePEM: String
        do { activePEM = try secrets.value(sessionKeySecret) } catch { throw Problem(error.description + " (generate one with `keyward keys generate`)") }
        let active: ECPrivateKey
        do { active = try ECPrivateKey(pkcs8PEM: activePEM) } catch {
            throw Problem("secret \(sessionKeySecret): not a PKCS#8 PEM private key")
        }
        guard active.publicKey.curve == .p256 else { throw Problem("secret \(sessionKeySecret): not a P-256 key (ES256)") }
        var retired: [(kid: String, key: ECPublicKey)] = []
        let retiredText: String?
        do { retiredText = try secrets.optionalValue(retiredSessionKeysSecret) } catch {
            // An empty retired-keys file means none: the systemd unit's `SetCredential=` default
            // is a lone newline, so the unit starts before any key has been retired.
            guard error.isEmptyFile else { throw Problem(error.description) }
            retiredText = nil
        }
        let retiredBlocks = pemBlocks(retiredText ?? "")
        // An emptied file is fine (nothing retired); text without a key would leave every session
        // signed by the old key failing `kid_unknown` while the operator believes it kept.
        if retiredBlocks.isEmpty, let retiredText, retiredText.contains(where: { !$0.isWhitespace }) {
            throw Problem("secret \(retiredSessionKeysSecret): no PEM block (-----BEGIN PUBLIC KEY----- …) in it; "
                + "put the retired public keys there as `keyward keys rotate` writes them, or empty it")
        }
        for block in retiredBlocks {
            let key: ECPublicKey
            if let publicKey = try? ECPublicKey(pem: block) {
                key = publicKey
            } else if let privateKey = try? ECPrivateKey(pkcs8PEM: block) {
                key = privateKey.publicKey
            } else {
                throw Problem("secret \(retiredSessionKeysSecret): a PEM block is not a public or PKCS#8 private key")
            }
            guard key.curve == .p256 else {
                throw Problem("secret \(retiredSessionKeysSecret): a PEM block is not a P-256 key (ES256 sessions are signed with P-256 only)")
            }
            let kid = SessionKeySet.thumbprintKID(for: key)
            // The signing key also listed as retired (step 2 of a rotation, when the new key was
            // published as verify-only first), or a key listed twice, is the same key: keep one.
            guard kid != SessionKeySet.thumbprintKID(for: active.publicKey), !retired.contains(where: { $0.kid == kid }) else { continue }
            retired.append((kid, key))
        }
        do {
            return try SessionKeySet(active: (SessionKeySet.thumbprintKID(for: active.publicKey), active), verifyOnly: retired)
        } catch {
            throw Problem("session keys: \(error)")
        }
    }

    /// The secret naming the admin API's bearer token; without it the admin API is off.
    public static let adminTokenSecret = "KEYWARD_ADMIN_TOKEN"

    /// `KEYWARD_ADMIN_TOKEN`, or nil when unset (admin API off).
    /// - Throws: `Problem` when it is set but shorter than 32 characters (guessable) or unreadable.
    public static func adminToken(_ secrets: SecretSource) throws(Problem) -> String? {
        let token: String?
        do { token = try secrets.optionalValue(adminTokenSecret) } catch { throw Problem(error.description) }
        guard let token else { return nil }
        guard token.utf8.count >= 32 else {
            throw Problem("secret \(adminTokenSecret): must be at least 32 characters (e.g. openssl rand -hex 32)")
        }
        return token
    }

    /// Loads `providers.toml` and resolves every provider's secret.
    /// - Throws: `Problem` with every `file:line: key: message` of the registry, or the secrets missing.
    public static func providers(path: String, secrets: SecretSource) throws(Problem) -> ProviderTable.Snapshot {
        let registry: ProviderRegistry
        do { registry = try ProviderRegistry.load(path: path) } catch { throw Problem(error.description) }
        do { return try ProviderTable.resolve(registry, secrets: secrets) } catch { throw Problem(error.description) }
    }

    /// Opens the configured store and applies pending migrations.
    /// - Parameter createIfMissing: false for commands that work on an existing store only (`keyward
    ///   devices`): a SQLite file that does not exist is refused (`sqlite_missing`, naming the path)
    ///   instead of being created empty, so a mistyped path is not read as "no devices".
    /// - Throws: `Problem` naming the store URL with its password redacted, and the `StoreError`.
    public static func store(_ configuration: KeywardConfiguration, createIfMissing: Bool = true) throws(Problem) -> any Store {
        do {
            let store = try openStore(url: configuration.storeURL, createIfMissing: createIfMissing)
            try store.migrate()
            // Refuse to start on a store that cannot take a write (a read-only file, a standby).
            try store.ping()
            return store
        } catch {
            // A schema this binary does not know (a rollback to an older binary) stays so.
            throw Problem("store \(redacted(configuration.storeURL)): \(error)", isPermanent: error.kind == .schema)
        }
    }

    /// The store as `serve`'s requests reach it: `[store]`'s pool and deadline; for SQLite the
    /// in-memory limits rebuilt from the persisted admissions, holding the database's limits lock.
    /// - Throws: `Problem` naming the store URL (redacted), e.g. when another `serve` already
    ///   decides rate limits on the same SQLite file.
    public static func asyncStore(_ store: any Store, _ configuration: KeywardConfiguration, nowMillis: Int64) throws(Problem) -> AsyncStore {
        var settings = AsyncStore.Configuration()
        settings.poolSize = configuration.storePoolSize
        settings.operationTimeoutMillis = configuration.storeOperationTimeoutMillis
        do {
            return try AsyncStore(store: store, configuration: settings, nowMillis: nowMillis)
        } catch {
            throw Problem("store \(redacted(configuration.storeURL)): \(error)")
        }
    }

    /// Opens the store like `store(_:)`, trying up to `configuration.storeStartAttempts` times
    /// `configuration.storeStartRetrySeconds` apart, so a Keyward started beside its database
    /// server (compose, a reboot) waits for it instead of exiting. Each failed try logs one
    /// `store_unavailable` line (attempt, attempts, the reason with the password redacted).
    /// The embedded SQLite store is tried once: no server is on its way, and a path that is a
    /// directory, not a database or not writable stays so however long `serve` waits. Nor is a
    /// store whose schema is newer than this binary tried again.
    /// - Parameter pause: waits between tries (seconds); tests pass one that returns at once.
    /// - Throws: `Problem` of the last try when none succeeded.
    public static func waitForStore(
        _ configuration: KeywardConfiguration, logger: Logger,
        open: (KeywardConfiguration) throws(Problem) -> any Store = { (configuration) throws(Problem) in try store(configuration) },
        pause: (Int) -> Void = { seconds in Thread.sleep(forTimeInterval: Double(seconds)) }
    ) throws(Problem) -> any Store {
        let attempts = configuration.storeURL.hasPrefix("sqlite://") ? 1 : max(1, configuration.storeStartAttempts)
        var attempt = 1
        while true {
            do {
                return try open(configuration)
            } catch {
                var line = logger.line("store_unavailable")
                line.add("attempt", attempt)
                line.add("attempts", attempts)
                line.add("message", error.description)
                logger.emit(line)
                guard attempt < attempts, !error.isPermanent else { throw error }
                attempt += 1
                pause(configuration.storeStartRetrySeconds)
            }
        }
    }

    /// A store URL fit for a message: any password in it replaced.
    public static func redacted(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://"), let at = url[schemeEnd.upperBound...].firstIndex(of: "@") else { return url }
        let userInfo = url[schemeEnd.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    /// The PEM blocks of `text`, each from its BEGIN line to its END line.
    static func pemBlocks(_ text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("-----BEGIN ") { current = [] }
            current.append(line)
            if line.hasPrefix("-----END ") { blocks.append(current.joined(separator: "\n") + "\n") }
        }
        return blocks
    }
}
