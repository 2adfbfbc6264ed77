import DeviceSimulator
import Foundation
@testable import Keyward
import KeywardCrypto
import Store
import XCTest

/// A detected reuse of an Android install credential ends the install's sessions with its
/// credentials: at once on the instance that detected it, within the device-status interval
/// (`revocationCheckSeconds`, 30 s) on the others; the next Play Integrity handshake gets a session
/// that works. On SQLite and on PostgreSQL.
final class CredentialReuseSessionTests: XCTestCase {
    var harness: AndroidEndToEndTests.Harness?
    var postgres: PostgresServer?

    override func tearDown() {
        harness?.shutdown()
        postgres?.stop()
    }

    private func start(storeURL: String? = nil) throws -> AndroidEndToEndTests.Harness {
        if AndroidEndToEndTests.sharedAccount == nil { AndroidEndToEndTests.sharedAccount = try SimulatedServiceAccount.generate() }
        let made = try AndroidEndToEndTests.Harness(mode: .standard, account: try XCTUnwrap(AndroidEndToEndTests.sharedAccount), storeURL: storeURL)
        harness = made
        return made
    }

    private func postgresURL(_ database: String) throws -> String {
        let server = try PostgresServer()
        postgres = server
        return try server.createDatabase(database)
    }

    private func proxied(_ env: AndroidEndToEndTests.Harness, _ token: String) throws -> Int {
        try env.client.call("GET", "/p/chat/v1/models", headers: [("Authorization", "Bearer " + token)]).status
    }

    private func refreshed(_ env: AndroidEndToEndTests.Harness, _ credential: String, file: StaticString = #filePath, line: UInt = #line) throws -> (token: String, credential: String) {
        let (response, json) = try env.refresh(credential)
        XCTAssertEqual(response.status, 200, "\(json)", file: file, line: line)
        return (try XCTUnwrap(json["token"] as? String, file: file, line: line), try XCTUnwrap(json["install_credential"] as? String, file: file, line: line))
    }

    /// The handshake's session and the two refreshes after it: the first credential is then the
    /// copy whose use is a reuse. Every session works before it.
    private func chain(_ env: AndroidEndToEndTests.Harness) throws -> (sessions: [String], first: String) {
        let (status, json) = try env.handshake(.standard)
        XCTAssertEqual(status, 200, "\(json)")
        let token0 = try XCTUnwrap(json["token"] as? String)
        let first = try XCTUnwrap(json["install_credential"] as? String)
        let (token1, second) = try refreshed(env, first)
        let (token2, _) = try refreshed(env, second)   // the thief's or the app's: either may hold the newest
        for token in [token0, token1, token2] { XCTAssertEqual(try proxied(env, token), 200) }
        return ([token0, token1, token2], first)
    }

    private func assertSessionRevoked(_ env: AndroidEndToEndTests.Harness, _ token: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let response = try env.client.call("GET", "/p/chat/v1/models", headers: [("Authorization", "Bearer " + token)])
        XCTAssertEqual(response.status, 401, file: file, line: line)
        XCTAssertEqual(response.header("keyward-error"), "session_invalid", file: file, line: line)
        let last = env.logObjects().last { $0["event"] as? String == "request" && $0["route"] as? String == "proxy" }
        XCTAssertEqual(last?["reason"] as? String, "session_revoked", file: file, line: line)
    }

    /// After the reuse, a new handshake (a second later) gets a session that works.
    private func assertANewHandshakeWorks(_ env: AndroidEndToEndTests.Harness, installID: String? = nil) throws {
        env.time.set(millis: env.time.nowMillis() + 1_000)
        env.google.setNow(env.time.nowSeconds())
        let (status, json) = try env.handshake(.standard)
        XCTAssertEqual(status, 200, "\(json)")
        XCTAssertEqual(try proxied(env, try XCTUnwrap(json["token"] as? String)), 200)
    }

    private func reuseOnThisInstance(_ env: AndroidEndToEndTests.Harness) throws {
        let (sessions, first) = try chain(env)
        let (response, json) = try env.refresh(first)
        XCTAssertEqual(response.status, 401, "\(json)")
        XCTAssertEqual(env.logObjects().filter { $0["event"] as? String == "install_credential_reused" }.count, 1)
        // At once, here: the newest session (minted by a refresh) and the older ones alike.
        for token in sessions.reversed() { try assertSessionRevoked(env, token) }
        try assertANewHandshakeWorks(env)
    }

    /// Another instance detects the reuse (its store call is made here directly): this instance
    /// keeps serving the sessions it confirmed until its device-status interval ends, not after.
    private func reuseOnAnotherInstance(_ env: AndroidEndToEndTests.Harness) throws {
        let (sessions, first) = try chain(env)
        let raw = try XCTUnwrap(Base64.decode(first))
        let outcome = try env.store.exchangeInstallCredential(
            hash: SHA256.hash(raw), successorHash: SHA256.hash(Array("elsewhere".utf8)), nonce: [1], now: env.time.nowSeconds(),
            retryWindowSeconds: InstallCredentials.retryWindowSeconds)
        guard case .reused = outcome else { return XCTFail("expected a reuse, got \(outcome)") }
        XCTAssertEqual(try proxied(env, sessions[2]), 200, "within the interval this instance still trusts its cached status")
        env.time.set(millis: env.time.nowMillis() + 30_000)
        env.google.setNow(env.time.nowSeconds())
        for token in sessions.reversed() { try assertSessionRevoked(env, token) }
        try assertANewHandshakeWorks(env)
    }

    func testReuseDetectedHereRevokesTheInstallsSessionsAtOnceOnSQLite() throws {
        let env = try start()
        try reuseOnThisInstance(env)
        // The operator sees the cut-off.
        let device = try XCTUnwrap(env.logObjects().first { $0["event"] as? String == "install_credential_reused" }?["device"] as? String)
        let config = env.directory + "/keyward.toml"
        try "[store]\nurl = \"sqlite://\(env.directory)/keyward.db\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let shown = try KeywardBinary.run(["devices", "show", "--config", config, "--id", device])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("sessions     issued before 20"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("refused (by a revocation or a detected install credential reuse)"), shown.stdout)
    }

    func testReuseDetectedElsewhereRevokesTheInstallsSessionsWithinThirtySecondsOnSQLite() throws {
        try reuseOnAnotherInstance(try start())
    }

    func testReuseDetectedHereRevokesTheInstallsSessionsAtOnceOnPostgres() throws {
        try reuseOnThisInstance(try start(storeURL: try postgresURL("reuse_here")))
    }

    func testReuseDetectedElsewhereRevokesTheInstallsSessionsWithinThirtySecondsOnPostgres() throws {
        try reuseOnAnotherInstance(try start(storeURL: try postgresURL("reuse_elsewhere")))
    }
}
