import DeviceSimulator
import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import Upstream
import TestWaiting
import XCTest

/// The `keyward` executable as operators and newcomers use it.
final class CommandLineTests: XCTestCase {
    func testDemoRunsEveryStepAndStreamsEventsSeparately() throws {
        let result = try KeywardBinary.run(["demo"], timeout: 120)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("All 11 steps passed"), result.stdout)
        for step in ["challenge", "attest", "assert", "streamed call", "refused path", "rate limit", "usage", "daily budget",
                     "revoked device", "android attest", "android refresh"] {
            XCTAssertTrue(result.stdout.contains(step), "step \(step) missing")
        }
        XCTAssertFalse(result.stdout.contains("FAIL"))
        XCTAssertTrue(result.stdout.contains("no call to Google (decodes still 1)"), result.stdout)
        // Each event is printed as it arrives, with its arrival time: 300 ms apart, not all at once.
        let times = result.stdout.split(separator: "\n").compactMap { line -> Double? in
            guard line.contains("data: "), let plus = line.range(of: "+"), let ms = line.range(of: " ms") else { return nil }
            return Double(line[plus.upperBound..<ms.lowerBound])
        }
        XCTAssertEqual(times.count, 4)
        for (earlier, later) in zip(times, times.dropFirst()) {
            XCTAssertGreaterThan(later - earlier, 200, "events did not arrive separately: \(times)")
        }
    }

    /// Into a pipe (a supervisor, `tee`), the session and the curl line must arrive while the
    /// server runs, not when it exits.
    func testDemoKeepRunningPrintsItsSessionIntoAPipeBeforeItStops() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: KeywardBinary.path)
        process.arguments = ["demo", "--keep-running"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        // Read on another thread: with the output held back, a read here would block until the exit.
        let received = LockedData()
        let printed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var all = Data()
            while true {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { return }
                all.append(chunk)
                received.set(all)
                if String(decoding: all, as: UTF8.self).contains("curl -N") {
                    printed.signal()
                    return
                }
            }
        }
        _ = printed.wait(timeout: .now() + 60)
        let text = String(decoding: received.data, as: UTF8.self)
        XCTAssertTrue(process.isRunning, "the demo stopped instead of staying up: \(text)")
        XCTAssertTrue(text.contains("All 11 steps passed"), text)
        XCTAssertTrue(text.contains("TOKEN=ey"), text)
        XCTAssertTrue(text.contains("curl -N"), text)
        // SIGTERM the moment it has printed: the signal must not fall between handlers being set up.
        process.terminate()
        _ = waitUntil(timeout: 15, pollMillis: 50) { !process.isRunning }
        XCTAssertFalse(process.isRunning, "SIGTERM did not stop demo --keep-running")
    }

    /// `sessions mint --device dev-a --device dev-b` mints for neither: the repeated flag is a
    /// usage error naming it (before any configuration or store is read).
    func testAFlagGivenTwiceIsAUsageErrorNamingTheFlag() throws {
        let cases: [([String], String)] = [
            (["sessions", "mint", "--device", "dev-a", "--device", "dev-b"], "--device"),
            (["check-config", "--config", "a.toml", "--config=b.toml"], "--config"),
            (["keys", "generate", "--force", "--force"], "--force"),
        ]
        for (arguments, flag) in cases {
            let result = try KeywardBinary.run(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("\(flag) given more than once"), "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stdout, "", "\(arguments)")
        }
    }

    func testUnknownSubcommandAndFlagAreUsageErrors() throws {
        XCTAssertEqual(try KeywardBinary.run(["frobnicate"]).status, 2)
        XCTAssertEqual(try KeywardBinary.run(["check-config", "--no-such-flag"]).status, 2)
        let help = try KeywardBinary.run(["--help"])
        XCTAssertEqual(help.status, 0)
        for name in ["serve", "check-config", "migrate", "devices", "keys", "sessions", "demo", "inspect"] {
            XCTAssertTrue(help.stdout.contains(name), name)
        }
    }

    // MARK: check-config

    static let sessionKeyPEM: String = {
        (try? ECPrivateKey.generate(.p256).pkcs8PEM) ?? ""
    }()

    static let shippedSecrets = [
        "KEYWARD_SESSION_KEY": sessionKeyPEM, "OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": "sk-2", "GEMINI_API_KEY": "g-3",
        "GOOGLE_MAPS_API_KEY": "m-4", "STRIPE_RESTRICTED_KEY": "rk-5", "ELEVENLABS_API_KEY": "e-6",
    ]

    func testCheckConfigAcceptsTheShippedExamples() throws {
        let root = KeywardBinary.repositoryRoot.path
        let result = try KeywardBinary.run(
            ["check-config", "--config", root + "/keyward.toml", "--providers", root + "/providers.toml"], environment: Self.shippedSecrets)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("ok"))
    }

    /// Runs `check-config` on a keyward.toml with `storeURL` (nil: a file in the folder) and one
    /// provider `name`, with `extra` lines in its table.
    private func checkConfig(storeURL: String? = nil, provider name: String = "p", extra: String = "", keywardExtra: String = "") throws
        -> (status: Int32, stdout: String, stderr: String) {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = storeURL ?? "sqlite://\(folder.path)/k.db"
        let config = try folder.write("keyward.toml", "providers_file = \"p.toml\"\n[store]\nurl = \"\(url)\"\n" + keywardExtra)
        _ = try folder.write("p.toml", """
            [\(name)]
            base_url = "https://api.example.com"
            secret = "P_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "GET", path = "/v1/*" } ]
            \(extra)
            """)
        let result = try KeywardBinary.run(["check-config", "--config", config], environment: ["KEYWARD_SESSION_KEY": Self.sessionKeyPEM, "P_KEY": "k"])
        return (result.status, result.stdout, result.stderr)
    }

    func testCheckConfigRefusesAStorePathServeCannotOpenAsADatabase() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let notADatabase = try folder.write("notes.txt", "not a database\n")
        let fileResult = try checkConfig(storeURL: "sqlite://\(notADatabase)")
        XCTAssertEqual(fileResult.status, 1, fileResult.stderr)
        XCTAssertTrue(fileResult.stderr.contains("store.url: \(notADatabase) exists and is not a SQLite database"), fileResult.stderr)
        let directoryResult = try checkConfig(storeURL: "sqlite://\(folder.path)")
        XCTAssertEqual(directoryResult.status, 1, directoryResult.stderr)
        XCTAssertTrue(directoryResult.stderr.contains("store.url: \(folder.path) is not a regular file"), directoryResult.stderr)
        // An empty file is where SQLite makes a new database: accepted, as serve accepts it.
        let empty = try folder.write("empty.db", "")
        XCTAssertEqual(try checkConfig(storeURL: "sqlite://\(empty)").status, 0)
    }

    func testCheckConfigWarnsOfATrustedProxyRangeThatTrustsEveryPeer() throws {
        let open = try checkConfig(keywardExtra: "[listen]\ntrusted_proxies = [\"10.0.0.0/8\", \"0.0.0.0/0\"]\n")
        XCTAssertEqual(open.status, 0, open.stderr)
        XCTAssertTrue(open.stderr.contains("warning: listen.trusted_proxies: 0.0.0.0/0 trusts X-Forwarded-For"), open.stderr)
        XCTAssertFalse(open.stderr.contains("10.0.0.0/8 trusts"), open.stderr)
    }

    func testCheckConfigWarnsOfAMissingSQLiteFolderWithoutFailing() throws {
        let result = try checkConfig(storeURL: "sqlite:///nonexistent-keyward-folder/k.db")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("warning: store.url: the folder /nonexistent-keyward-folder does not exist yet"), result.stderr)
    }

    /// A folder that exists but where this process cannot create the database (here /proc, which
    /// refuses new files even to root) is warned about, as `serve` would fail to open the store;
    /// a writable one gets no warning.
    func testCheckConfigWarnsOfAStoreFolderItCannotWriteTo() throws {
        let unwritable = try checkConfig(storeURL: "sqlite:///proc/k.db")
        XCTAssertEqual(unwritable.status, 0, unwritable.stderr)
        XCTAssertTrue(unwritable.stderr.contains("warning: store.url: cannot create files in /proc"), unwritable.stderr)
        let writable = try checkConfig()
        XCTAssertFalse(writable.stderr.contains("warning: store.url"), writable.stderr)
    }

    /// `rate_limit = { }` limits nothing: refused with file, line and key. A day limit below the
    /// minute limit: a warning with file, line and key, the configuration stays valid.
    func testCheckConfigRefusesAnEmptyRateLimitAndWarnsOfAnUnreachableMinuteLimit() throws {
        let empty = try checkConfig(extra: "rate_limit = { }")
        XCTAssertEqual(empty.status, 1, empty.stderr)
        XCTAssertTrue(empty.stderr.contains("p.toml:6: p.rate_limit: names no limit"), empty.stderr)
        let unreachable = try checkConfig(extra: "rate_limit = { per_minute = 10, per_day = 5 }")
        XCTAssertEqual(unreachable.status, 0, unreachable.stderr)
        XCTAssertTrue(unreachable.stderr.contains("p.toml:6: p.rate_limit.per_day: warning: per_day (5) is below per_minute (10)"), unreachable.stderr)
    }

    func testCheckConfigWarnsOfASignedProviderWhileIOSIsOff() throws {
        let result = try checkConfig(provider: "signed", extra: "require_assertion = true")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("warning: [signed] require_assertion: iOS is off"), result.stderr)
        XCTAssertTrue(result.stdout.contains("1 provider)"), result.stdout)
    }

    func testCheckConfigReportsEachBrokenFileWithFileAndLine() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let good = """
            [p]
            base_url = "https://api.example.com"
            secret = "P_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "GET", path = "/v1/*" } ]
            """
        let keyward = { (extra: String) in "providers_file = \"providers.toml\"\n" + extra }
        // (keyward.toml, providers.toml, secrets, expected fragment naming file and line)
        let cases: [(String, String, [String: String], String)] = [
            (keyward(""), "[p\nbase_url = 1", ["P_KEY": "k"], "providers.toml:1"),
            (keyward(""), good + "\ncolour = \"blue\"", ["P_KEY": "k"], "providers.toml:6"),
            (keyward(""), good, [:], "providers.toml:3: p.secret: P_KEY is not set"),
            (keyward(""), good, ["P_KEY_FILE": "/nonexistent/p.key"], "cannot read /nonexistent/p.key"),
            (keyward(""), good.replacingOccurrences(of: "https://api.example.com", with: "http://api.example.com"), ["P_KEY": "k"], "providers.toml:2"),
            (keyward(""), good.replacingOccurrences(of: "Bearer {key}", with: "Bearer {key}\\r\\nX-Evil: 1"), ["P_KEY": "k"], "providers.toml:4"),
            (keyward("[sessions]\nttl_seconds = 5\n"), good, ["P_KEY": "k"], "keyward.toml:3"),
            (keyward("[sesions]\nttl_seconds = 60\n"), good, ["P_KEY": "k"], "keyward.toml:2"),
            (keyward("[apple]\nteam_id = \"ABCDE12345\"\nbundle_ids = [\"com.example.app\"]\nenvironment = \"production\"\n[apple.risk]\nmax_metric = 0\n"),
             good, ["P_KEY": "k"], "keyward.toml:7"),
        ]
        for (index, (keywardText, providersText, secrets, expected)) in cases.enumerated() {
            let config = try folder.write("keyward.toml", keywardText)
            _ = try folder.write("providers.toml", providersText)
            var environment = secrets
            environment["KEYWARD_SESSION_KEY"] = Self.sessionKeyPEM
            let result = try KeywardBinary.run(["check-config", "--config", config], environment: environment)
            XCTAssertEqual(result.status, 1, "case \(index): \(result.stdout)")
            XCTAssertTrue(result.stderr.contains(expected), "case \(index): expected \(expected) in \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("\"k\""))
        }
    }

    /// A named pipe given as the configuration, the providers file or a `*_FILE` secret is refused
    /// at once, naming the file (reading it would block until something writes to the pipe).
    func testConfigProvidersAndSecretFilesThatAreFIFOsAreRefusedAtOnce() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fifo = folder.path + "/named.pipe"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0, String(cString: strerror(errno)))
        let providers = try folder.write("providers.toml", """
            [p]
            base_url = "https://api.example.com"
            secret = "P_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "GET", path = "/v1/*" } ]
            """)
        let config = try folder.write("keyward.toml", "providers_file = \"providers.toml\"\n")
        let pipedProviders = try folder.write("piped.toml", "providers_file = \"named.pipe\"\n")
        let session = ["KEYWARD_SESSION_KEY": Self.sessionKeyPEM]
        let refusal = "\(fifo): not a regular file but a named pipe (FIFO)"
        let cases: [([String], [String: String])] = [
            (["check-config", "--config", fifo], session),
            (["check-config", "--config", pipedProviders], session.merging(["P_KEY": "k"]) { $1 }),
            (["check-config", "--config", config, "--providers", fifo], session.merging(["P_KEY": "k"]) { $1 }),
            (["check-config", "--config", config], session.merging(["P_KEY_FILE": fifo]) { $1 }),
            (["serve", "--config", fifo], session),
        ]
        for (arguments, environment) in cases {
            // A hang is the fault under test: 20 s is far beyond a refusal and fails the case.
            let result = try KeywardBinary.run(arguments, environment: environment, timeout: 20)
            XCTAssertEqual(result.status, 1, "\(arguments) \(environment.keys.sorted()): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(refusal), "\(arguments) \(environment.keys.sorted()): \(result.stderr)")
        }
        // The control: the same files without the pipe pass.
        let good = try KeywardBinary.run(["check-config", "--config", config, "--providers", providers],
                                         environment: session.merging(["P_KEY": "k"]) { $1 })
        XCTAssertEqual(good.status, 0, good.stderr)
    }

    /// `check-config` runs the loading and checks `serve` runs (without binding ports): what one
    /// refuses, the other refuses with the same message; what one accepts, the other starts with.
    func testDevicesHelpSaysWhatRevocationStopsAndWhatItDoesNot() throws {
        let result = try KeywardBinary.run(["devices", "--help"], environment: [:])
        XCTAssertEqual(result.status, 0, result.stderr)
        for phrase in ["What revoking a device stops", "every install credential", "What it does not stop",
                       "makes a new key", "a new install id", "DeviceCheck"] {
            XCTAssertTrue(result.stdout.contains(phrase), "\(phrase) missing from: \(result.stdout)")
        }
    }

    func testADevicesFlagOfAnotherActionIsAUsageError() throws {
        // Refused before the configuration is read: the missing file would be exit 1, not 2.
        let missing = "/nonexistent/keyward.toml"
        for (arguments, flag) in [
            (["devices", "list", "--json"], "--json"), (["devices", "show", "--id", "d1", "--top", "3"], "--top"),
            (["devices", "list", "--unattested"], "--unattested"), (["devices", "unrevoke", "--id", "d1", "--yes"], "--yes"),
            (["devices", "usage", "--before", "2026-01-01"], "--before"), (["devices", "set-tier", "d1", "pro", "--json"], "--json"),
        ] {
            let result = try KeywardBinary.run(arguments + ["--config", missing], environment: [:])
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("unknown flag \(flag) for \(arguments[1])"), result.stderr)
            XCTAssertEqual(result.stdout, "", "\(arguments)")
        }
        // The family's one JSON mode still parses (and then fails on the missing file: exit 1).
        XCTAssertEqual(try KeywardBinary.run(["devices", "usage", "--json", "--config", missing], environment: [:]).status, 1)
    }

    func testCheckConfigAndServeRefuseAnAppKeyOrDeviceCheckSecretThatIsMissingOrMalformed() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        _ = try folder.write("p.toml", """
            [p]
            base_url = "https://api.example.com"
            secret = "P_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "GET", path = "/v1/*" } ]
            """)
        let path = try folder.write("keyward.toml", """
            providers_file = "p.toml"
            [listen]
            proxy = "127.0.0.1:\(freeLoopbackPort())"
            admin = "127.0.0.1:\(freeLoopbackPort())"
            [store]
            url = "sqlite://\(folder.path)/k.db"
            [handshake]
            require_app_key = true
            """)
        let base = ["KEYWARD_SESSION_KEY": Self.sessionKeyPEM, "P_KEY": "k"]
        for (environment, expected) in [
            (base, "KEYWARD_APP_KEYS"),
            (base.merging(["KEYWARD_APP_KEYS": "ios-prod pk_live_0123456789abcdef"]) { $1 }, "line 1: expected name=key"),
        ] {
            let check = try KeywardBinary.run(["check-config", "--config", path], environment: environment)
            XCTAssertEqual(check.status, 1, check.stdout)
            XCTAssertTrue(check.stderr.contains(expected), check.stderr)
            XCTAssertFalse(check.stderr.contains("pk_live_0123456789abcdef"), "the key never reaches an error")
            let serve = try KeywardBinary.run(["serve", "--config", path], environment: environment, timeout: 30)
            XCTAssertEqual(serve.status, 1)
            XCTAssertTrue(serve.stderr.contains(expected), serve.stderr)
        }
        let good = base.merging(["KEYWARD_APP_KEYS": "ios-prod=pk_live_0123456789abcdef\n"]) { $1 }
        let check = try KeywardBinary.run(["check-config", "--config", path], environment: good)
        XCTAssertEqual(check.status, 0, check.stderr)

        // [apple.devicecheck]: its private key is a secret both read the same way.
        let deviceCheckPath = try folder.write("devicecheck.toml", """
            providers_file = "p.toml"
            [listen]
            proxy = "127.0.0.1:\(freeLoopbackPort())"
            admin = "127.0.0.1:\(freeLoopbackPort())"
            [store]
            url = "sqlite://\(folder.path)/k.db"
            [apple]
            team_id = "ABCDE12345"
            bundle_ids = ["com.example.app"]
            environment = "production"
            [apple.devicecheck]
            key_id = "KEY1234567"
            """)
        for (environment, expected) in [
            (base, "KEYWARD_DEVICECHECK_KEY"),
            (base.merging(["KEYWARD_DEVICECHECK_KEY": "not a key"]) { $1 }, "not a P-256 private key"),
        ] {
            let check = try KeywardBinary.run(["check-config", "--config", deviceCheckPath], environment: environment)
            XCTAssertEqual(check.status, 1, check.stdout)
            XCTAssertTrue(check.stderr.contains(expected), check.stderr)
            let serve = try KeywardBinary.run(["serve", "--config", deviceCheckPath], environment: environment, timeout: 30)
            XCTAssertEqual(serve.status, 1)
            XCTAssertTrue(serve.stderr.contains(expected), serve.stderr)
        }
        let withKey = base.merging(["KEYWARD_DEVICECHECK_KEY": try ECPrivateKey.generate(.p256).pkcs8PEM]) { $1 }
        let accepted = try KeywardBinary.run(["check-config", "--config", deviceCheckPath], environment: withKey)
        XCTAssertEqual(accepted.status, 0, accepted.stderr)
    }

    func testCheckConfigRefusesWhatServeRefuses() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let keys = try IntegrityTestKeys.generate()
        _ = try folder.write("p.toml", """
            [p]
            base_url = "https://api.example.com"
            secret = "P_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "GET", path = "/v1/*" } ]
            """)
        let config = { (mode: String) in
            try folder.write("keyward.toml", """
                providers_file = "p.toml"
                [listen]
                proxy = "127.0.0.1:\(freeLoopbackPort())"
                admin = "127.0.0.1:\(freeLoopbackPort())"
                [store]
                url = "sqlite://\(folder.path)/k.db"
                [android]
                package_names = ["com.example.app"]
                signing_cert_digests = ["\(String(repeating: "AB", count: 32))"]
                mode = "\(mode)"
                """)
        }
        let base = ["KEYWARD_SESSION_KEY": Self.sessionKeyPEM, "P_KEY": "k"]
        let classic = base.merging(["KEYWARD_PLAY_DECRYPTION_KEY": keys.decryptionKeyBase64,
                                    "KEYWARD_PLAY_VERIFICATION_KEY": keys.verificationKeyBase64]) { $1 }
        // (mode, environment, a fragment of the one error line)
        let cases: [(String, [String: String], String)] = [
            ("classic", classic.merging(["KEYWARD_PLAY_DECRYPTION_KEY": "DECRYPTION_KEY=" + keys.decryptionKeyBase64]) { $1 }, "decryption key"),
            ("classic", classic.merging(["KEYWARD_PLAY_VERIFICATION_KEY": "VERIFICATION_KEY=" + keys.verificationKeyBase64]) { $1 }, "verification key"),
            ("classic", classic.filter { $0.key != "KEYWARD_PLAY_DECRYPTION_KEY" }, "KEYWARD_PLAY_DECRYPTION_KEY"),
            ("standard", base, "KEYWARD_GOOGLE_SERVICE_ACCOUNT"),
            ("classic", classic.merging(["KEYWARD_SESSION_KEYS_RETIRED": "kid-1 retired last week"]) { $1 }, "KEYWARD_SESSION_KEYS_RETIRED"),
        ]
        for (index, (mode, environment, expected)) in cases.enumerated() {
            let path = try config(mode)
            let check = try KeywardBinary.run(["check-config", "--config", path], environment: environment)
            XCTAssertEqual(check.status, 1, "case \(index): check-config said \(check.stdout)")
            XCTAssertTrue(check.stderr.contains(expected), "case \(index): expected \(expected) in \(check.stderr)")
            let serve = try KeywardBinary.run(["serve", "--config", path], environment: environment, timeout: 30)
            XCTAssertEqual(serve.status, 1, "case \(index): serve")
            XCTAssertTrue(serve.stderr.contains(expected), "case \(index): expected \(expected) in \(serve.stderr)")
        }
        // The control: the same files with good keys pass.
        let good = try KeywardBinary.run(["check-config", "--config", try config("classic")], environment: classic)
        XCTAssertEqual(good.status, 0, good.stderr)
    }

    func testKeyFileErrorsAreOneLineNamingTheFileAndWhatToDo() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let missing = folder.path + "/missing.pem"
        let garbage = try folder.write("garbage.pem", "not a key\n")
        let cases: [([String], String, String)] = [
            (["keys", "rotate", "--key-file", missing, "--retired-file", folder.path + "/retired.pem"], missing, "keyward keys generate"),
            (["keys", "kid", "--key-file", missing], missing, "keyward keys generate"),
            (["keys", "rotate", "--key-file", garbage, "--retired-file", folder.path + "/retired.pem"], garbage, "PKCS#8"),
            (["keys", "generate", "--out", folder.path + "/no-such-folder/key.pem"], folder.path + "/no-such-folder/key.pem", "folder"),
        ]
        for (arguments, file, hint) in cases {
            let result = try KeywardBinary.run(arguments)
            let lines = result.stderr.split(separator: "\n")
            XCTAssertEqual(result.status, 1, arguments.joined(separator: " "))
            XCTAssertEqual(lines.count, 1, "\(arguments.joined(separator: " ")): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(file) && result.stderr.contains(hint), "\(arguments.joined(separator: " ")): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("NSCocoaErrorDomain"), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.path + "/retired.pem"), "rotate wrote the retired file before failing")
    }

    /// `keys rotate` with one file as both the key and the retired file (by name, by another
    /// spelling, through a symbolic link) is a usage error that writes nothing: rotating would
    /// leave only the new key in it and lose the old one.
    func testKeysRotateRefusesTheKeyFileAsItsOwnRetiredFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let pem = try ECPrivateKey.generate(.p256).pkcs8PEM
        let keyFile = try folder.write("cur.pem", pem)
        let link = folder.path + "/retired-link.pem"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: keyFile)
        for retired in [keyFile, folder.path + "/./cur.pem", link] {
            let result = try KeywardBinary.run(["keys", "rotate", "--key-file", keyFile, "--retired-file", retired])
            XCTAssertEqual(result.status, 2, "\(retired): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("--key-file and --retired-file name the same file"), result.stderr)
            XCTAssertEqual(try String(contentsOfFile: keyFile, encoding: .utf8), pem, "\(retired): the key file was rewritten")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(), ["cur.pem", "retired-link.pem"])
        // The control: another retired file rotates.
        let rotated = try KeywardBinary.run(["keys", "rotate", "--key-file", keyFile, "--retired-file", folder.path + "/retired.pem"])
        XCTAssertEqual(rotated.status, 0, rotated.stderr)
        XCTAssertNotEqual(try String(contentsOfFile: keyFile, encoding: .utf8), pem)
        XCTAssertTrue(try String(contentsOfFile: folder.path + "/retired.pem", encoding: .utf8).hasPrefix("-----BEGIN PUBLIC KEY-----"))
    }

    // MARK: serve, SIGHUP, mint, devices

    func testServeReloadsOnSIGHUPKeepingTheOldRegistryWhenTheNewOneIsBroken() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let upstream = FakeProvider(expectedAuthorization: "Bearer up-key")
        try upstream.start()
        defer { upstream.stop() }
        let port = freeLoopbackPort()
        let adminPort = freeLoopbackPort()
        let provider = { (name: String, path: String) in
            """
            [\(name)]
            base_url = "http://127.0.0.1:\(upstream.port)"
            allow_http_loopback = true
            secret = "UP_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "GET", path = "\(path)" } ]

            """
        }
        let providers = try folder.write("providers.toml", provider("first", "/v1/models"))
        let config = try folder.write("keyward.toml", """
            providers_file = "providers.toml"
            [listen]
            proxy = "127.0.0.1:\(port)"
            admin = "127.0.0.1:\(adminPort)"
            [store]
            url = "sqlite://\(folder.path)/keyward.db"
            [apple]
            team_id = "ABCDE12345"
            bundle_ids = ["com.example.app"]
            environment = "production"
            [shutdown]
            readiness_grace_seconds = 0
            """)
        let environment = ["KEYWARD_SESSION_KEY": Self.sessionKeyPEM, "UP_KEY": "up-key"]
        let minted = try KeywardBinary.run(
            ["sessions", "mint", "--config", config, "--device", "load-test-1", "--register", "--token-only"], environment: environment)
        XCTAssertEqual(minted.status, 0, minted.stderr)
        let token = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: KeywardBinary.path)
        serve.arguments = ["serve", "--config", config]
        serve.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let logPipe = Pipe()
        serve.standardError = logPipe
        // Read as it comes, so a test step can wait for the line its signal produces.
        let log = LockedData()
        let logClosed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var all = Data()
            while true {
                let chunk = logPipe.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                all.append(chunk)
                log.set(all)
            }
            logClosed.signal()
        }
        let logged = { (text: String) in String(decoding: log.data, as: UTF8.self).contains(text) }
        try serve.run()
        defer { if serve.isRunning { serve.terminate() } }

        let client = DemoClient(baseURL: "http://127.0.0.1:\(port)", client: sharedClient)
        let ready = waitUntil(timeout: 30, pollMillis: 50) { (try? client.call("GET", "/healthz").status) == 200 }
        XCTAssertTrue(ready, "serve did not come up")
        let bearer = ("Authorization", "Bearer " + token)
        XCTAssertEqual(try client.call("GET", "/p/first/v1/models", headers: [bearer]).status, 200)

        try "[first\nbase_url = ".write(toFile: providers, atomically: true, encoding: .utf8)
        kill(serve.processIdentifier, SIGHUP)
        XCTAssertTrue(waitUntil(timeout: 10) { logged("providers_reload_refused") }, "the broken registry was never refused")
        XCTAssertEqual(try client.call("GET", "/p/first/v1/models", headers: [bearer]).status, 200, "the old registry must stay")

        try (provider("first", "/v1/models") + provider("second", "/v2/models")).write(toFile: providers, atomically: true, encoding: .utf8)
        kill(serve.processIdentifier, SIGHUP)
        XCTAssertTrue(waitUntil(timeout: 10) { logged("providers_reloaded") }, "the fixed registry was never loaded")
        XCTAssertEqual(try client.call("GET", "/p/second/v2/models", headers: [bearer]).status, 200)
        XCTAssertEqual(upstream.received.last?.target, "/v2/models")

        // The operator's side of revocation (its effect on live sessions is pinned in ProxyEndToEndTests).
        let revoked = try KeywardBinary.run(["devices", "revoke", "--config", config, "--id", "load-test-1"], environment: environment)
        XCTAssertEqual(revoked.status, 0, revoked.stderr)
        // Bulk revocation says how many first and needs --dry-run or --yes.
        for extra in ["load-test-2", "load-test-3"] {
            let registered = try KeywardBinary.run(
                ["sessions", "mint", "--config", config, "--device", extra, "--register", "--token-only"], environment: environment)
            XCTAssertEqual(registered.status, 0, registered.stderr)
        }
        let unconfirmed = try KeywardBinary.run(["devices", "revoke", "--config", config, "--before", "2100-01-01"], environment: environment)
        XCTAssertEqual(unconfirmed.status, 2)
        XCTAssertTrue(unconfirmed.stderr.contains("would revoke 2 devices attested before 2100-01-01T00:00:00Z"), unconfirmed.stderr)
        let dryRun = try KeywardBinary.run(["devices", "revoke", "--config", config, "--before", "2100-01-01", "--dry-run"], environment: environment)
        XCTAssertEqual(dryRun.status, 0, dryRun.stderr)
        XCTAssertTrue(dryRun.stdout.contains("load-test-2") && dryRun.stdout.contains("would revoke 2 devices"), dryRun.stdout)
        XCTAssertFalse(try KeywardBinary.run(["devices", "list", "--config", config], environment: environment).stdout
            .split(separator: "\n").contains { $0.contains("load-test-2") && $0.hasSuffix("yes") }, "a dry run changed nothing")
        let both = try KeywardBinary.run(["devices", "revoke", "--config", config, "--before", "2100-01-01", "--dry-run", "--yes"], environment: environment)
        XCTAssertEqual(both.status, 2)
        let confirmed = try KeywardBinary.run(["devices", "revoke", "--config", config, "--before", "2100-01-01", "--yes"], environment: environment)
        XCTAssertEqual(confirmed.status, 0, confirmed.stderr)
        XCTAssertTrue(confirmed.stdout.contains("revoked 2 devices"), confirmed.stdout)
        let listed = try KeywardBinary.run(["devices", "list", "--config", config], environment: environment)
        XCTAssertTrue(listed.stdout.contains("load-test-1"))
        XCTAssertTrue(listed.stdout.contains("yes"))

        kill(serve.processIdentifier, SIGTERM)
        serve.waitUntilExit()
        XCTAssertEqual(serve.terminationStatus, 0)
        XCTAssertEqual(logClosed.wait(timeout: .now() + 5), .success, "the log pipe never closed")
        let lines = String(decoding: log.data, as: UTF8.self)
        XCTAssertTrue(lines.contains("providers_reload_refused"), lines)
        XCTAssertTrue(lines.contains("providers.toml:"), "the refusal names file and line")
        XCTAssertTrue(lines.contains("providers_reloaded"))
        // SIGTERM: announced, drained, and the end said too.
        XCTAssertTrue(lines.contains("\"event\":\"stopping\""), lines)
        XCTAssertTrue(lines.contains("\"event\":\"stopped\""), lines)
        XCTAssertFalse(lines.contains(token), "the session token reached the log")
        XCTAssertFalse(lines.contains("up-key"), "the provider key reached the log")
    }
}

let sharedClient = Upstream.UpstreamClient()
