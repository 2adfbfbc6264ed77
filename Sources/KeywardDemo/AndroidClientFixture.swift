import DeviceSimulator
import Foundation
import HTTPServer
import Keyward
import KeywardCrypto
import Synchronization

/// `keyward-demo android-fixture`: a whole Keyward on loopback for the Android client library's
/// tests (clients/android), which drive it from another process.
///
/// It starts a fake Google (standard mode: OAuth token endpoint and `decodeIntegrityToken`), a fake
/// provider, Keyward itself (the real server, its SQLite store in a temporary folder, clock pinned
/// to the start time and moved only by the tests), and a control listener for the tests. It prints
/// one JSON line on stdout — `{"base_url", "control_url", "app_key", "package_name",
/// "provider_key_name", "now_millis", "session_ttl_seconds", "install_daily_credits", "costly_cost"}`
/// — then serves until stdin reaches end of file (the test process closed it or exited), and
/// removes its folder.
///
/// Keyward's settings: `[handshake] require_app_key` with one app key, Android standard mode for
/// ``DemoAndroid/packageName``, sessions of 60 s (the shortest allowed), revocation checked on
/// every call, a daily budget of ``dailyCredits`` credits per install. Providers:
/// - `fixture`: `GET /v1/echo` (200 JSON naming the method and target), `GET /v1/provider-401`
///   (the provider's own 401, which Keyward relays), `POST /v1/stream` (server-sent events: the
///   first at once, the rest only after the control route `/release-stream`).
/// - `costly`: `GET /v1/echo` at ``costlyCost`` credits a call.
///
/// With `--fakes-only` it starts no Keyward: the fake Google, the provider and the control listener
/// only, for a test that runs a real `keyward serve` against them. The line then reads
/// `{"google_url", "service_account_file", "provider_url", "provider_key", "provider_key_name",
/// "control_url", "app_key", "package_name", "certificate_digest_hex", "directory", ...}` (the
/// service account's key file and the folder are removed at the end); the fake Google follows the
/// system clock, and `/advance` and `/revoke` answer 404 (the test revokes with `keyward devices`).
///
/// Control routes (127.0.0.1, JSON):
/// - `POST /integrity-token {"request_hash"}` → `{"token"}`: what Play would hand the app for that
///   requestHash (a genuine verdict for the package, made a second before Keyward's now).
/// - `GET /state` → `{"decode_count", "now_millis", "provider_requests": {path: n}, "stream_events_written"}`.
/// - `POST /advance {"seconds"}`: moves Keyward's and the fake Google's clocks forward.
/// - `POST /revoke {"device_id"}`: revokes the device in the store (as `keyward devices revoke`).
/// - `POST /release-stream`: lets every held stream write its remaining events and finish.
public enum AndroidClientFixture {
    /// The app key the fixture requires on every handshake route (`X-Keyward-App-Key`).
    static let appKey = "android-fixture-app-key-0001"
    /// Each install's daily credits.
    static let dailyCredits = 50
    /// Credits one `costly` call spends: the second in a day is refused.
    static let costlyCost = 30
    static let sessionTTLSeconds: Int64 = 60
    static let providerKeyName = "FIXTURE_PROVIDER_KEY"

    /// Runs the fixture until stdin closes; returns the exit code (0, or 1 when it could not start).
    public static func run(_ arguments: [String]) -> Int32 {
        guard arguments.isEmpty || arguments == ["--fakes-only"] else {
            FileHandle.standardError.write(Data("usage: keyward-demo android-fixture [--fakes-only] (stops at end of stdin)\n".utf8))
            return 2
        }
        do {
            let fixture = try RunningFixture(withKeyward: arguments.isEmpty)
            print(fixture.announcement())
            _ = FileHandle.standardInput.readDataToEndOfFile()
            fixture.shutdown()
            return 0
        } catch {
            FileHandle.standardError.write(Data("keyward-demo android-fixture: could not start: \(error)\n".utf8))
            return 1
        }
    }

    static func providersTOML(port: UInt16) -> String {
        """
        [fixture]
        base_url = "http://127.0.0.1:\(port)"
        allow_http_loopback = true
        secret = "\(providerKeyName)"
        auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
        allow = [
          { method = "GET", path = "/v1/echo" },
          { method = "GET", path = "/v1/provider-401" },
          { method = "POST", path = "/v1/stream" },
        ]

        [costly]
        base_url = "http://127.0.0.1:\(port)"
        allow_http_loopback = true
        secret = "\(providerKeyName)"
        auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
        allow = [ { method = "GET", path = "/v1/echo", cost = \(costlyCost) } ]
        """
    }
}

/// The fixture's parts while it runs.
final class RunningFixture: Sendable {
    let time: ManualTimeSource
    let android: DemoAndroid
    let provider: GatedProvider
    let providerKey: String
    /// Nil with `--fakes-only`.
    let deployment: LocalDeployment?
    /// Where `--fakes-only` keeps the service account's key file.
    let directory: String
    let control: HTTPServer

    init(withKeyward: Bool) throws {
        time = ManualTimeSource(millis: SystemTimeSource().nowMillis())
        providerKey = "fixture-" + Hex.encode(SecureRandom.bytes(12))
        provider = GatedProvider(expectedAuthorization: "Bearer " + providerKey)
        try provider.start()
        let android = try DemoAndroid(now: time.nowSeconds())
        self.android = android
        directory = FileManager.default.temporaryDirectory.path + "/keyward-android-fakes-" + Hex.encode(SecureRandom.bytes(6))
        if withKeyward {
            deployment = try Self.deployment(time: time, android: android, provider: provider, providerKey: providerKey)
        } else {
            deployment = nil
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let keyPath = directory + "/service-account.json"
            guard FileManager.default.createFile(atPath: keyPath, contents: Data(android.keyFile), attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: keyPath])
            }
        }
        let holder = Mutex<RunningFixture?>(nil)
        control = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2), bodyLimit: { _ in 64 * 1024 }) {
            head, body, writer in
            guard let fixture = holder.withLock({ $0 }) else { return writer.respond(status: 503) }
            let (status, json) = fixture.answer(method: head.method, path: head.path, body: body)
            let bytes = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])).map { [UInt8]($0) } ?? []
            writer.respond(status: status, headers: [("Content-Type", "application/json")], body: bytes)
        }
        try control.start()
        holder.withLock { $0 = self }
    }

    static func deployment(time: ManualTimeSource, android: DemoAndroid, provider: GatedProvider, providerKey: String) throws -> LocalDeployment {
        let appKeys = try AppKeySet(parsing: "android-fixture=\(AndroidClientFixture.appKey)")
        return try LocalDeployment(
            providersTOML: AndroidClientFixture.providersTOML(port: provider.port),
            secrets: [AndroidClientFixture.providerKeyName: providerKey],
            settings: { settings in
                settings.apple = nil
                settings.sessionTTLSeconds = AndroidClientFixture.sessionTTLSeconds
                settings.revocationCheckSeconds = 0
                settings.handshakeBurst = 10_000
                settings.handshakeRatePerSecond = 10_000
                settings.appKeys = appKeys
                var spend = SpendSettings()
                spend.installDailyCredits = AndroidClientFixture.dailyCredits
                settings.spend = spend
            },
            time: time,
            android: { try android.handshake(upstream: $0) })
    }

    /// The one line the test process reads first.
    func announcement() -> String {
        var object: [String: Any] = [
            "control_url": "http://127.0.0.1:\(control.port)",
            "app_key": AndroidClientFixture.appKey,
            "package_name": DemoAndroid.packageName,
            "now_millis": time.nowMillis(),
            "session_ttl_seconds": AndroidClientFixture.sessionTTLSeconds,
            "install_daily_credits": AndroidClientFixture.dailyCredits,
            "costly_cost": AndroidClientFixture.costlyCost,
        ]
        if let deployment {
            object["base_url"] = deployment.baseURL
        } else {
            object["google_url"] = android.baseURL
            object["service_account_file"] = directory + "/service-account.json"
            object["provider_url"] = "http://127.0.0.1:\(provider.port)"
            object["provider_key"] = providerKey
            object["provider_key_name"] = AndroidClientFixture.providerKeyName
            object["certificate_digest_hex"] = Hex.encode(DemoAndroid.certificate)
            object["directory"] = directory
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    func answer(method: String, path: String, body: [UInt8]) -> (Int, [String: Any]) {
        let fields = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        switch (method, path) {
        case ("POST", "/integrity-token"):
            guard let requestHash = fields["request_hash"] as? String else { return (400, ["error": "request_hash missing"]) }
            // Beside a real `keyward serve`, the fake Google keeps to the system clock, as Keyward does.
            if deployment == nil {
                time.set(millis: SystemTimeSource().nowMillis())
                android.google.setNow(time.nowSeconds())
            }
            var verdict = AndroidIntegrityVerdict(
                request: .standard, packageName: DemoAndroid.packageName, challenge: [], installID: "",
                timestampMillis: time.nowMillis() - 1_000, certificateDigest: DemoAndroid.certificate)
            verdict.binding = requestHash
            return (200, ["token": android.google.issueStandardToken(verdict)])
        case ("GET", "/state"):
            return (200, [
                "decode_count": android.google.decodeCount,
                "now_millis": time.nowMillis(),
                "provider_requests": provider.requestCounts,
                "stream_events_written": provider.eventsWritten,
            ])
        case ("POST", "/advance") where deployment != nil:
            guard let seconds = (fields["seconds"] as? NSNumber)?.int64Value, seconds >= 0 else {
                return (400, ["error": "seconds missing"])
            }
            time.advance(millis: seconds * 1000)
            android.google.setNow(time.nowSeconds())
            return (200, ["now_millis": time.nowMillis()])
        case ("POST", "/revoke"):
            guard let deployment else { return (404, ["error": "no Keyward here: use keyward devices revoke"]) }
            guard let deviceID = fields["device_id"] as? String else { return (400, ["error": "device_id missing"]) }
            do {
                let found = try deployment.store.setRevoked(deviceID: deviceID, true, now: time.nowSeconds())
                return (found ? 200 : 404, ["revoked": found])
            } catch {
                return (500, ["error": "\(error)"])
            }
        case ("POST", "/release-stream"):
            return (200, ["released": provider.release()])
        default:
            return (404, ["error": "no such control route"])
        }
    }

    func shutdown() {
        control.stop()
        deployment?.shutdown()
        android.stop()
        provider.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The fixture's provider: an echo, its own 401, and an event stream held after its first event
/// until the test releases it, so a test sees the first event arrive while the last is not yet
/// written (an event, not a pause, orders them).
final class GatedProvider: Sendable {
    private struct State {
        var counts: [String: Int] = [:]
        var held: [ResponseStream] = []
        var eventsWritten = 0
    }

    private let state = Mutex(State())
    private let server: HTTPServer

    /// The events a stream writes after it is released, in order.
    static let laterEvents = ["data: second\n\n", "event: done\ndata: [DONE]\n\n"]

    /// - Parameter expectedAuthorization: the `Authorization` value a correctly proxied request carries.
    init(expectedAuthorization: String) {
        let holder = Mutex<GatedProvider?>(nil)
        server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2), bodyLimit: { _ in 1 << 20 }) {
            head, _, writer in
            guard let provider = holder.withLock({ $0 }) else { return writer.respond(status: 503) }
            provider.answer(head, writer: writer, expectedAuthorization: expectedAuthorization)
        }
        holder.withLock { $0 = self }
    }

    func start() throws { try server.start() }
    func stop() { server.stop() }
    var port: UInt16 { server.port }
    /// Requests received per path.
    var requestCounts: [String: Int] { state.withLock { $0.counts } }
    /// Events written (or about to be: each is counted just before it is written) over every stream.
    var eventsWritten: Int { state.withLock { $0.eventsWritten } }

    private func answer(_ head: HTTPRequestHead, writer: ResponseWriter, expectedAuthorization: String) {
        state.withLock { $0.counts[head.path, default: 0] += 1 }
        guard head.header("authorization") == expectedAuthorization else {
            return writer.respond(status: 403, headers: [("Content-Type", "application/json")], body: Array("{\"error\":\"wrong key\"}".utf8))
        }
        switch (head.method, head.path) {
        case ("GET", "/v1/echo"):
            var target = ""
            LogLine.appendQuoted(head.target, to: &target)
            writer.respond(
                status: 200, headers: [("Content-Type", "application/json"), ("X-Provider", "fixture")],
                body: Array("{\"method\":\"\(head.method)\",\"target\":\(target)}".utf8))
        case ("GET", "/v1/provider-401"):
            writer.respond(
                status: 401, headers: [("Content-Type", "application/json"), ("WWW-Authenticate", "Bearer realm=\"fixture\"")],
                body: Array("{\"error\":\"the provider's own refusal\"}".utf8))
        case ("POST", "/v1/stream"):
            // Counted before the head goes out, so a client that has the head reads a count that
            // includes the first event; held before that event goes out, so a client that has it
            // can release the rest.
            state.withLock { $0.eventsWritten += 1 }
            let stream = writer.startStream(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
            state.withLock { $0.held.append(stream) }
            _ = stream.write(Array("data: first\n\n".utf8))
        default:
            writer.respond(status: 404)
        }
    }

    /// Writes the remaining events of every held stream and finishes them; returns how many.
    func release() -> Int {
        let streams = state.withLock { state -> [ResponseStream] in
            defer { state.held.removeAll() }
            return state.held
        }
        for stream in streams {
            for event in Self.laterEvents {
                state.withLock { $0.eventsWritten += 1 }
                _ = stream.write(Array(event.utf8))
            }
            stream.finish()
        }
        return streams.count
    }
}
