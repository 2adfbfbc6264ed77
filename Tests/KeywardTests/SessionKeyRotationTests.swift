import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import Sessions
import XCTest

/// README's rotation procedure across two instances sharing one store, with SIGHUP's reload
/// (`server.reload()`): publish the new key as verify-only everywhere, switch signing everywhere,
/// drop the old key. Clients call both instances all along and never get a 401; tokens of the
/// dropped key stop verifying.
final class SessionKeyRotationTests: XCTestCase {
    /// One instance's two key files, as `KEYWARD_SESSION_KEY_FILE` / `KEYWARD_SESSION_KEYS_RETIRED_FILE` name them.
    struct KeyFiles: Sendable {
        let signing: String
        let verifyOnly: String
        func write(signing key: ECPrivateKey, verifyOnly keys: [ECPrivateKey]) throws {
            try key.pkcs8PEM.write(toFile: signing, atomically: true, encoding: .utf8)
            try keys.map(\.publicKey.pem).joined().write(toFile: verifyOnly, atomically: true, encoding: .utf8)
        }
        var read: @Sendable () throws -> SessionKeySet {
            let environment = ["KEYWARD_SESSION_KEY_FILE": signing, "KEYWARD_SESSION_KEYS_RETIRED_FILE": verifyOnly]
            return { try ServiceAssembly.sessionKeys(SecretSource(environment: environment)) }
        }
    }

    /// Calls both instances with every token it holds, round after round, getting a new session
    /// from each instance every round; counts the statuses.
    final class Fleet: @unchecked Sendable {
        private let lock = NSLock()
        private var tokens: [String] = []
        private var unauthorized: [String] = []
        private var others: [Int] = []
        private var completedRounds = 0
        private var stopped = false
        let done = DispatchSemaphore(value: 0)

        func add(_ token: String) { lock.lock(); tokens.append(token); lock.unlock() }
        var rounds: Int { lock.lock(); defer { lock.unlock() }; return completedRounds }
        var report: (unauthorized: [String], others: [Int], tokens: Int) {
            lock.lock(); defer { lock.unlock() }
            return (unauthorized, others, tokens.count)
        }
        func stop() { lock.lock(); stopped = true; lock.unlock(); done.wait() }

        func run(_ instances: [TestDeployment]) {
            DispatchQueue.global().async { [self] in
                defer { done.signal() }
                while true {
                    lock.lock()
                    let current = tokens
                    let stop = stopped
                    lock.unlock()
                    if stop { return }
                    for (index, instance) in instances.enumerated() {
                        if let (_, token) = try? instance.session() { add(token) } else { record(nil, "handshake on \(index)") }
                        for token in current {
                            let status = try? instance.client.call("GET", "/p/chat/v1/models", headers: [instance.bearer(token)]).status
                            record(status, "instance \(index)")
                        }
                    }
                    lock.lock(); completedRounds += 1; lock.unlock()
                }
            }
        }

        private func record(_ status: Int?, _ what: String) {
            lock.lock(); defer { lock.unlock() }
            if status == 401 { unauthorized.append(what) } else if status != 200 { others.append(status ?? -1) }
        }

        /// Blocks until three more rounds have completed, at most 60 s: the round in flight when
        /// the caller changed something may have started before it; the next one gets sessions
        /// under the change; the one after calls both instances with them.
        func waitForRounds() {
            let target = rounds + 3
            let deadline = Date().addingTimeInterval(60)
            while rounds < target && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }  // polls under the deadline
            XCTAssertGreaterThanOrEqual(rounds, target, "the fleet stalled")
        }
    }

    func testReadmeProcedureAcrossTwoInstancesGivesNoUnauthorized() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let oldKey = try ECPrivateKey.generate(.p256)
        let newKey = try ECPrivateKey.generate(.p256)
        let files = (0..<2).map { KeyFiles(signing: folder.path + "/key-\($0).pem", verifyOnly: folder.path + "/retired-\($0).pem") }
        for instance in files { try instance.write(signing: oldKey, verifyOnly: []) }
        let store = "sqlite://\(folder.path)/shared.db"
        let first = try TestDeployment(shards: 0, store: store, sessionKeys: files[0].read)
        defer { first.shutdown() }
        let second = try TestDeployment(shards: 0, store: store, sessionKeys: files[1].read, anchor: first.deployment.anchor)
        defer { second.shutdown() }
        let (_, oldToken) = try first.session()

        let fleet = Fleet()
        fleet.add(oldToken)
        fleet.run([first, second])
        fleet.waitForRounds()

        // 1. The new key verifies everywhere, one instance after the other.
        for (index, instance) in [first, second].enumerated() {
            try files[index].write(signing: oldKey, verifyOnly: [newKey])
            XCTAssertTrue(instance.deployment.server.reload())
            fleet.waitForRounds()
        }
        // 2. Signing switches, one instance after the other; the first also keeps the new key in
        //    its verify-only list (the signing key listed there too is not an error).
        try files[0].write(signing: newKey, verifyOnly: [oldKey, newKey])
        XCTAssertTrue(first.deployment.server.reload())
        fleet.waitForRounds()
        try files[1].write(signing: newKey, verifyOnly: [oldKey])
        XCTAssertTrue(second.deployment.server.reload())
        fleet.waitForRounds()
        fleet.stop()
        let report = fleet.report
        // 3. After the session TTL, when no token of the old key is live any more, it goes (here
        //    at once, with the fleet's old tokens still held, to see them stop).
        for (index, instance) in [first, second].enumerated() {
            try files[index].write(signing: newKey, verifyOnly: [])
            XCTAssertTrue(instance.deployment.server.reload())
        }
        XCTAssertEqual(report.unauthorized, [], "401s during the rotation")
        XCTAssertEqual(report.others, [], "other failures during the rotation")
        XCTAssertGreaterThan(report.tokens, 10)

        for instance in [first, second] {
            let response = try instance.client.call("GET", "/p/chat/v1/models", headers: [instance.bearer(oldToken)])
            XCTAssertEqual(response.status, 401, "a token of the dropped key must stop verifying")
            let (_, newToken) = try instance.session()
            XCTAssertEqual(try instance.client.call("GET", "/p/chat/v1/models", headers: [instance.bearer(newToken)]).status, 200)
        }
        // Each reload said what it put in force.
        let lines = first.logLines.filter { $0.contains("\"event\":\"session_keys_reloaded\"") }
        XCTAssertEqual(lines.count, 3)
        let newKID = SessionKeySet.thumbprintKID(for: newKey.publicKey)
        let oldKID = SessionKeySet.thumbprintKID(for: oldKey.publicKey)
        XCTAssertTrue(lines[0].contains("\"signing_kid\":\"\(oldKID)\",\"verify_only_kids\":\"\(newKID)\""), lines[0])
        XCTAssertTrue(lines[1].contains("\"signing_kid\":\"\(newKID)\",\"verify_only_kids\":\"\(oldKID)\""), lines[1])
        XCTAssertTrue(lines[2].contains("\"signing_kid\":\"\(newKID)\",\"verify_only_kids\":\"\""), lines[2])
    }

    func testANewSigningKeyWithNoRetiredKeysIsReloadedWithAWarning() throws {
        // What a SIGHUP after `keys rotate` does in a process that was never given the retired file.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let oldKey = try ECPrivateKey.generate(.p256)
        let newKey = try ECPrivateKey.generate(.p256)
        let files = KeyFiles(signing: folder.path + "/key.pem", verifyOnly: folder.path + "/retired.pem")
        try files.write(signing: oldKey, verifyOnly: [])
        let env = try TestDeployment(sessionKeys: files.read)
        defer { env.shutdown() }
        let (_, oldToken) = try env.session()
        let oldKID = SessionKeySet.thumbprintKID(for: oldKey.publicKey)

        // The same key again: no warning.
        XCTAssertTrue(env.deployment.server.reload())
        try files.write(signing: newKey, verifyOnly: [])
        XCTAssertTrue(env.deployment.server.reload())
        let lines = env.logLines.filter { $0.contains("\"event\":\"session_keys_reloaded\"") }
        XCTAssertEqual(lines.count, 2)
        XCTAssertFalse(lines[0].contains("\"warning\""), lines[0])
        XCTAssertTrue(lines[1].contains("\"warning\":\"the signing key changed and no retired keys are configured"), lines[1])
        XCTAssertTrue(lines[1].contains("(kid \(oldKID))"), lines[1])
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(oldToken)]).status, 401)

        // A change with the old key kept as verify-only: no warning.
        let nextKey = try ECPrivateKey.generate(.p256)
        try files.write(signing: nextKey, verifyOnly: [newKey])
        XCTAssertTrue(env.deployment.server.reload())
        let third = try XCTUnwrap(env.logLines.filter { $0.contains("\"event\":\"session_keys_reloaded\"") }.last)
        XCTAssertFalse(third.contains("\"warning\""), third)
    }

    func testARetiredKeyOnAnotherCurveIsRefusedNamingItsSecretAndCurve() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let files = KeyFiles(signing: folder.path + "/key.pem", verifyOnly: folder.path + "/retired.pem")
        try files.write(signing: try ECPrivateKey.generate(.p256), verifyOnly: [try ECPrivateKey.generate(.p384)])
        XCTAssertThrowsError(try files.read()) { error in
            XCTAssertEqual("\(error)", "secret KEYWARD_SESSION_KEYS_RETIRED: a PEM block is not a P-256 key (ES256 sessions are signed with P-256 only)")
        }
    }

    func testABrokenKeyFileKeepsTheKeysInForce() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let key = try ECPrivateKey.generate(.p256)
        let files = KeyFiles(signing: folder.path + "/key.pem", verifyOnly: folder.path + "/retired.pem")
        try files.write(signing: key, verifyOnly: [])
        let env = try TestDeployment(sessionKeys: files.read)
        defer { env.shutdown() }
        let (_, token) = try env.session()
        try "-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n".write(toFile: files.signing, atomically: true, encoding: .utf8)
        XCTAssertFalse(env.deployment.server.reload())
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
        XCTAssertEqual(env.logLines.filter { $0.contains("\"event\":\"session_keys_reload_refused\"") }.count, 1)
        XCTAssertEqual(env.logLines.filter { $0.contains("\"event\":\"providers_reloaded\"") }.count, 1, "the other part still reloads")
        XCTAssertFalse(env.logLines.joined().contains("broken"))
    }
}
