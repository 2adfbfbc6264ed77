import Keyward
import Sessions
import Store

/// `keyward sessions mint`: a session signed with the configured key, for smoke and load tests
/// against a real deployment.
enum SessionsCommand {
    static let usage = """
        usage: keyward sessions mint [--config FILE] --device ID [--platform ios|android] [--ttl SECONDS]
                                     [--register] [--token-only]

        Signs a session for device ID with KEYWARD_SESSION_KEY, exactly as the handshake would.
        The device must exist and not be revoked; --register first creates a synthetic device
        record with that id (environment "minted", no key: it can never pass a per-request
        assertion, and `keyward devices revoke --id ID` ends it). It counts as attested: its sessions
        pass providers with require_attested = true. --ttl defaults to, and may not
        exceed, the configured session TTL. Prints {"token", "expires_at"}, or the bare token
        with --token-only. Treat the token as a secret.

        exit codes: 0 minted, 1 failure, 2 usage error
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let options = CLIOutput.options(
            arguments, command: "sessions", usage: usage, valueFlags: ["config", "device", "platform", "ttl"],
            switchFlags: ["register", "token-only"], positional: 1...1)
        else { return 2 }
        if options.has("help") { print(usage); return 0 }
        guard options.positional == ["mint"], let deviceID = options.value("device"), !deviceID.isEmpty else {
            CLIOutput.error("keyward sessions: expected `mint --device ID`\n\n\(usage)")
            return 2
        }
        guard DeviceRecord.isValidID(deviceID) else {
            CLIOutput.error("keyward sessions mint: --device must be 1–128 characters of A-Z a-z 0-9 . _ : -")
            return 2
        }
        guard let platform = SessionPlatform(rawValue: options.value("platform") ?? "ios") else {
            CLIOutput.error("keyward sessions mint: --platform is ios or android")
            return 2
        }
        guard let configuration = CLIOutput.configuration(options, command: "sessions") else { return 1 }
        let ttl = Int64(options.value("ttl") ?? "") ?? Int64(configuration.sessionTTLSeconds)
        guard options.value("ttl") == nil || Int64(options.value("ttl") ?? "") != nil,
              (60...Int64(configuration.sessionTTLSeconds)).contains(ttl)
        else {
            CLIOutput.error("keyward sessions mint: --ttl must be 60…\(configuration.sessionTTLSeconds) seconds (the configured session TTL)")
            return 2
        }
        do {
            let keys = try ServiceAssembly.sessionKeys(SecretSource())
            let store = try ServiceAssembly.store(configuration)
            let now = SystemTimeSource().nowSeconds()
            if options.has("register") {
                _ = try store.registerDevice(DeviceRecord(
                    id: deviceID, platform: platform.rawValue, publicKey: [], counter: 0, environment: "minted",
                    createdAt: now, lastSeenAt: now))
            }
            guard let device = try store.device(id: deviceID) else {
                CLIOutput.error("keyward sessions mint: no device \(deviceID) (use --register for a synthetic one)")
                return 1
            }
            guard !device.revoked else {
                CLIOutput.error("keyward sessions mint: device \(deviceID) is revoked")
                return 1
            }
            guard device.platform == platform.rawValue else {
                CLIOutput.error("keyward sessions mint: device \(deviceID) is \(device.platform), not \(platform.rawValue)")
                return 1
            }
            let issuer = try SessionIssuer(keys: keys, issuer: configuration.sessionIssuer, ttlSeconds: ttl)
            let session = try issuer.issue(deviceID: deviceID, platform: platform, now: now)
            if options.has("token-only") {
                print(session.token)
            } else {
                print("{\"token\":\"\(session.token)\",\"expires_at\":\(session.expiresAt)}")
            }
            return 0
        } catch {
            CLIOutput.error("keyward sessions mint: \(error)")
            return 1
        }
    }
}
