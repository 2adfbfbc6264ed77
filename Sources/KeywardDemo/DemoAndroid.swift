import DeviceSimulator
import Foundation
import HTTPServer
import Keyward
import KeywardCrypto
import PlayIntegrity
import Synchronization
import Upstream

/// The demo's Android side: a fake Google (OAuth token endpoint and `decodeIntegrityToken`) on
/// loopback, a simulated service account it trusts, and the standard-mode Play Integrity
/// handshake pointed at it, so the demo can show one Play Integrity handshake and a refresh that
/// costs no decode.
final class DemoAndroid: Sendable {
    static let packageName = "dev.keyward.demo"
    static let certificate = SHA256.hash(Array("keyward demo signing certificate".utf8))

    let google: FakeGooglePlayIntegrity
    let server: HTTPServer
    let keyFile: [UInt8]
    let baseURL: String

    /// Starts the fake Google on an ephemeral loopback port, its clock at `now` (unix seconds).
    /// - Throws: `HTTPServerError` (bind), `CryptoError` (the service account's RSA key).
    init(now: Int64) throws {
        let holder = Mutex<FakeGooglePlayIntegrity?>(nil)
        server = HTTPServer(configuration: HTTPServerConfiguration(threads: 1), bodyLimit: { _ in 64 * 1024 }) { head, body, writer in
            guard let fake = holder.withLock({ $0 }) else { return writer.respond(status: 503) }
            let answer = fake.handle(method: head.method, path: head.path, headers: head.headers, body: body)
            writer.respond(status: answer.status, headers: answer.headers, body: answer.body)
        }
        try server.start()
        baseURL = "http://127.0.0.1:\(server.port)"
        let fake = FakeGooglePlayIntegrity(baseURL: baseURL, now: now)
        google = fake
        holder.withLock { $0 = fake }
        let account = try SimulatedServiceAccount.generate()
        fake.trust(account)
        keyFile = try account.keyFile(tokenURI: fake.tokenURL)
    }

    /// The standard-mode handshake, calling the fake Google through `upstream`.
    /// - Throws: `PlayIntegrityError` when the settings and secrets disagree (they do not here).
    func handshake(upstream: UpstreamClient) throws -> AndroidHandshake {
        let settings = AndroidSettings(
            packageNames: [Self.packageName], certificateDigests: [Self.certificate], mode: .standard,
            google: GoogleEndpoints(playIntegrityBaseURL: baseURL, tokenURL: nil))
        let keyFile = self.keyFile
        return AndroidHandshake(attestation: try AndroidAttestation(
            settings: settings, secrets: .standard(serviceAccount: { keyFile }), http: UpstreamGoogleHTTPClient(upstream: upstream)))
    }

    /// The opaque token Play would give the app for `challenge` and `installID`, made `ageMillis` before `nowMillis`.
    func integrityToken(challenge: [UInt8], installID: String, nowMillis: Int64) -> String {
        google.issueStandardToken(AndroidIntegrityVerdict(
            request: .standard, packageName: Self.packageName, challenge: challenge, installID: installID,
            timestampMillis: nowMillis - 1_000, certificateDigest: Self.certificate))
    }

    func stop() { server.stop() }
}
