import Keyward
import KeywardCrypto
import Store
import Upstream

/// `keyward devices list|show|revoke|unrevoke|set-tier|usage`: the operator's view of attested
/// devices, on an existing store only (a missing SQLite file is refused, not created).
enum DevicesCommand {
    static let usage = """
        usage: keyward devices list    [--config FILE] [--before DATE]
               keyward devices show    [--config FILE] --id ID
               keyward devices revoke  [--config FILE] (--id ID | --before DATE (--dry-run | --yes) | --unattested (--dry-run | --yes))
               keyward devices unrevoke [--config FILE] --id ID
               keyward devices set-tier [--config FILE] DEVICE TIER
               keyward devices usage   [--config FILE] [--day DATE] [--top N] [--json]

        DATE is 2026-11-29, 2026-11-29T13:05:00Z or unix seconds (a day or time that does not exist,
        such as 2026-02-30, is a usage error). `revoke --before` revokes every
        device registered before that time (for example after a compromised build was withdrawn):
        with --dry-run it lists them and says how many it would revoke; --yes revokes them; with
        neither it only says how many there are and exits 2. `revoke --unattested` works on every
        device admitted without a verified proof ([gate] mode monitor or off) and not yet revoked:
        with --dry-run it only says how many it would revoke; --yes revokes them in one
        transaction; with neither it says how many there are and exits 2. Run it after moving the
        gate to enforce: attested devices are untouched.
        What revoking a device stops: its live sessions (refused within 30 s); the same App Attest
        key attesting or asserting again (iOS, 403); the same install id getting a session through
        Play Integrity (Android, 403); every install credential of the device (/v1/refresh refuses
        them, and unrevoke does not bring them back).
        What it does not stop: the same phone coming back as a new device. A reinstalled iOS app
        makes a new key, and an Android app a new install id, and each is attested afresh. Only
        DeviceCheck ([apple.devicecheck], iOS) ties installs on one phone together: with it, revoke
        also sets bit 0 of the phone at Apple, so a new key on it is flagged or refused. Android
        has no such link. Requests already sent upstream are not recalled.
        set-tier puts a device in a tier of keyward.toml's [tiers] (or free, unattested); its live
        sessions spend against that tier's budget within 30 s. usage ranks the devices by credits
        spent on one UTC day (default today; --top 20), with their tier and attested flag, and the
        app's total. list, show and usage say whether each device is attested, and if not, why
        (the reason slug enforce would have refused its proof with). The "registered" column is when
        the device was first stored (its attestation, or its admission without one); the "proof"
        column says whether it attested.

        Every action works on an existing store: a SQLite file that does not exist is an error
        naming the path (exit 1), never created (keyward migrate or serve creates it).

        exit codes: 0 done, 1 not found or failure, 2 usage error
        """

    /// The flags each action takes (`--help` aside), as its usage line lists them.
    static let flagsByAction: [String: Set<String>] = [
        "list": ["config", "before"],
        "show": ["config", "id"],
        "revoke": ["config", "id", "before", "dry-run", "yes", "unattested"],
        "unrevoke": ["config", "id"],
        "set-tier": ["config"],
        "usage": ["config", "day", "top", "json"],
    ]

    static func run(_ arguments: [String]) -> Int32 {
        guard let options = CLIOutput.options(arguments, command: "devices", usage: usage, valueFlags: ["config", "id", "before", "day", "top"],
                                               switchFlags: ["dry-run", "yes", "json", "unattested"], positional: 1...3)
        else { return 2 }
        if options.has("help") { print(usage); return 0 }
        guard let action = options.positional.first, ["list", "show", "revoke", "unrevoke", "set-tier", "usage"].contains(action) else {
            CLIOutput.error("keyward devices: expected one of list, show, revoke, unrevoke, set-tier, usage\n\n\(usage)")
            return 2
        }
        guard options.positional.count == (action == "set-tier" ? 3 : 1) else {
            CLIOutput.error("keyward devices \(action): \(action == "set-tier" ? "expected DEVICE TIER" : "unexpected argument")\n\n\(usage)")
            return 2
        }
        // Every flag is parsed for the whole family; one another action takes is refused as any
        // unknown flag is (exit 2), never silently ignored (`list --json`: only usage has JSON).
        let accepted = flagsByAction[action] ?? []
        if let stray = (Set(options.values.keys).union(options.switches).subtracting(["help"])).subtracting(accepted).sorted().first {
            let takes = accepted.sorted().map { "--" + $0 }.joined(separator: ", ")
            CLIOutput.error("keyward devices \(action): unknown flag --\(stray) for \(action) (it takes \(takes))\n\n\(usage)")
            return 2
        }
        if action == "set-tier" { return setTier(options) }
        if action == "usage" { return usageReport(options) }
        var before: Int64?
        if let text = options.value("before") {
            guard let parsed = CLIOutput.parseTime(text) else {
                CLIOutput.error("keyward devices: --before: not a date: \(text)")
                return 2
            }
            before = parsed
        }
        let id = options.value("id")
        switch action {
        case "show", "unrevoke":
            guard id != nil else { CLIOutput.error("keyward devices \(action): missing --id\n\n\(usage)"); return 2 }
        case "revoke":
            guard [id != nil, before != nil, options.has("unattested")].filter({ $0 }).count == 1 else {
                CLIOutput.error("keyward devices revoke: give --id, --before or --unattested (one of them)\n\n\(usage)")
                return 2
            }
            guard !(options.has("dry-run") && options.has("yes")) else {
                CLIOutput.error("keyward devices revoke: give --dry-run or --yes, not both\n\n\(usage)")
                return 2
            }
            guard id == nil || !(options.has("dry-run") || options.has("yes")) else {
                CLIOutput.error("keyward devices revoke: --dry-run and --yes go with --before or --unattested, not with --id\n\n\(usage)")
                return 2
            }
        default:
            break
        }
        guard let configuration = CLIOutput.configuration(options, command: "devices") else { return 1 }
        do {
            let store = try ServiceAssembly.store(configuration, createIfMissing: false)
            let now = SystemTimeSource().nowSeconds()
            switch action {
            case "list":
                let devices = try store.listDevices(attestedBefore: before)
                print("id                                                                platform  env          registered            last seen             counter  proof                  risk  revoked")
                for device in devices { print(row(device)) }
                print("\(devices.count) device\(devices.count == 1 ? "" : "s")")
            case "show":
                guard let device = try store.device(id: id ?? "") else {
                    CLIOutput.error("keyward devices show: no device \(id ?? "")")
                    return 1
                }
                let today = SpendSettings.day(ofSeconds: now)
                print(details(device))
                print("credits today \(try store.creditsUsed(scope: CreditSpend.installScope(device.id), day: today))")
            case "revoke" where options.has("unattested"):
                let describe = { (count: Int) in "\(count) unattested device\(count == 1 ? "" : "s")" }
                if options.has("dry-run") {
                    print("would revoke \(describe(try store.countUnattested())) (dry run: nothing changed)")
                } else if options.has("yes") {
                    // Phones to mark at Apple, as revoke --before does: an unattested device carries a
                    // DeviceCheck token only when it attested once (with one) and was later admitted
                    // without a proof, which made it unattested again.
                    let withTokens = configuration.apple?.deviceCheck == nil ? [] : try store.listDevices(attestedBefore: nil)
                        .filter { !$0.attested && !$0.revoked && !$0.deviceCheckToken.isEmpty }
                    print("revoked \(describe(try store.revokeUnattested(now: now)))")
                    // Only those this transaction revoked: one that attested in between stays unmarked.
                    let revoked = try withTokens.compactMap { try store.device(id: $0.id) }.filter { $0.revoked && !$0.attested }
                    markPhones(revoked, configuration: configuration)
                } else {
                    CLIOutput.error("keyward devices revoke: this would revoke \(describe(try store.countUnattested())); nothing changed. "
                        + "Add --dry-run to count them or --yes to revoke them.")
                    return 2
                }
            case "revoke" where before != nil:
                let devices = try store.listDevices(attestedBefore: before).filter { !$0.revoked }
                let what = "\(devices.count) device\(devices.count == 1 ? "" : "s") attested before \(CLIOutput.isoTime(before ?? 0))"
                if options.has("dry-run") {
                    for device in devices { print(row(device)) }
                    print("would revoke \(what) (dry run: nothing changed)")
                } else if options.has("yes") {
                    for device in devices { _ = try store.setRevoked(deviceID: device.id, true, now: now) }
                    print("revoked \(what)")
                    markPhones(devices, configuration: configuration)
                } else {
                    CLIOutput.error("keyward devices revoke: this would revoke \(what); nothing changed. "
                        + "Add --dry-run to list them or --yes to revoke them.")
                    return 2
                }
            default:
                let revoke = action == "revoke"
                guard try store.setRevoked(deviceID: id ?? "", revoke, now: now) else {
                    CLIOutput.error("keyward devices \(action): no device \(id ?? "")")
                    return 1
                }
                print("\(revoke ? "revoked" : "unrevoked") \(id ?? "")")
                if revoke, let device = try store.device(id: id ?? "") { markPhones([device], configuration: configuration) }
            }
            return 0
        } catch {
            CLIOutput.error("keyward devices: " + CLIOutput.oneLine(error))
            return 1
        }
    }

    /// `usage [--day DATE] [--top N] [--json]`: devices ranked by credits spent that UTC day.
    static func usageReport(_ options: CommandLineOptions) -> Int32 {
        var day = SpendSettings.day(ofSeconds: SystemTimeSource().nowSeconds())
        if let text = options.value("day") {
            guard let seconds = CLIOutput.parseTime(text) else {
                CLIOutput.error("keyward devices usage: --day: not a date: \(text)")
                return 2
            }
            day = SpendSettings.day(ofSeconds: seconds)
        }
        var top = 20
        if let text = options.value("top") {
            guard let count = Int(text), (1...10_000).contains(count) else {
                CLIOutput.error("keyward devices usage: --top: must be 1-10000")
                return 2
            }
            top = count
        }
        guard let configuration = CLIOutput.configuration(options, command: "devices") else { return 1 }
        do {
            let store = try ServiceAssembly.store(configuration, createIfMissing: false)
            let ranked = try store.creditUsage(day: day, limit: top)
            let appTotal = try store.creditsUsed(scope: CreditSpend.appScope, day: day)
            let rows = try ranked.map { usage -> (CreditUsage, String, Bool) in
                let device = try store.device(id: usage.deviceID)
                return (usage, device?.tier ?? "-", device?.attested ?? false)
            }
            let date = String(CLIOutput.isoTime(day * 86_400).prefix(10))
            if options.has("json") {
                let devices = rows.map { "{\"device\":\"\($0.0.deviceID)\",\"credits\":\($0.0.used),\"tier\":\"\($0.1)\",\"attested\":\($0.2)}" }
                print("{\"day\":\"\(date)\",\"app_credits\":\(appTotal),\"devices\":[\(devices.joined(separator: ","))]}")
            } else {
                print("credits  tier          device (\(date), UTC)                                              attested")
                for (usage, tier, attested) in rows {
                    print(String(usage.used).padding(toLength: 8, withPad: " ", startingAt: 0) + " "
                        + tier.padding(toLength: max(13, tier.count), withPad: " ", startingAt: 0) + " "
                        + usage.deviceID.padding(toLength: max(65, usage.deviceID.count), withPad: " ", startingAt: 0) + " " + (attested ? "yes" : "no"))
                }
                print("\(rows.count) device\(rows.count == 1 ? "" : "s"); the app spent \(appTotal) credits counted toward its ceiling")
            }
            return 0
        } catch {
            CLIOutput.error("keyward devices: " + CLIOutput.oneLine(error))
            return 1
        }
    }

    /// `set-tier DEVICE TIER`: the tier must be one the configuration knows.
    static func setTier(_ options: CommandLineOptions) -> Int32 {
        let device = options.positional[1]
        let tier = options.positional[2]
        guard let configuration = CLIOutput.configuration(options, command: "devices") else { return 1 }
        let known = Set(["free", "unattested"] + Array(configuration.spend?.tiers.keys ?? [:].keys))
        guard known.contains(tier) else {
            CLIOutput.error("keyward devices set-tier: unknown tier \(tier); configured: \(known.sorted().joined(separator: ", "))")
            return 2
        }
        do {
            let store = try ServiceAssembly.store(configuration, createIfMissing: false)
            guard try store.setTier(deviceID: device, tier: tier) else {
                CLIOutput.error("keyward devices set-tier: no device \(device)")
                return 1
            }
            print("\(device) is now in tier \(tier) (live sessions follow within 30 s)")
            return 0
        } catch {
            CLIOutput.error("keyward devices: " + CLIOutput.oneLine(error))
            return 1
        }
    }

    static func row(_ device: DeviceRecord) -> String {
        func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0) }
        return pad(device.id, 65) + " " + pad(device.platform, 9) + " " + pad(device.environment, 12) + " "
            + pad(CLIOutput.isoTime(device.createdAt), 21) + " " + pad(CLIOutput.isoTime(device.lastSeenAt), 21) + " "
            + pad(String(device.counter), 8) + " " + pad(proof(device), 22) + " " + pad(device.riskMetric.map(String.init) ?? "-", 5) + " "
            + (device.revoked ? "yes" : "no")
    }

    /// With `[apple.devicecheck]`: sets DeviceCheck bit 0 of each revoked device's phone (those
    /// whose attestation carried a device token), keeping bit 1, so a reinstall on the phone is
    /// flagged or refused. A failure is a warning: the revocation itself is done.
    static func markPhones(_ devices: [DeviceRecord], configuration: KeywardConfiguration) {
        let withTokens = devices.filter { !$0.deviceCheckToken.isEmpty }
        guard configuration.apple?.deviceCheck != nil, !withTokens.isEmpty else { return }
        let upstream = UpstreamClient()
        defer { upstream.shutdown() }
        let client: DeviceCheckClient
        do {
            guard let made = try ServiceAssembly.deviceCheck(configuration, secrets: SecretSource(), upstream: upstream) else { return }
            client = made
        } catch {
            CLIOutput.error("keyward devices revoke: warning: DeviceCheck bits not set: \(error)")
            return
        }
        var marked = 0
        for device in withTokens {
            do {
                let now = SystemTimeSource().nowMillis()
                let current = try client.query(deviceToken: device.deviceCheckToken, nowMillis: now)
                if current?.bit0 != true {
                    try client.update(deviceToken: device.deviceCheckToken, bits: .init(bit0: true, bit1: current?.bit1 ?? false), nowMillis: now)
                }
                marked += 1
            } catch {
                CLIOutput.error("keyward devices revoke: warning: DeviceCheck bit 0 of \(device.id) not set: \(error.reason)")
            }
        }
        print("DeviceCheck: bit 0 set for \(marked) phone\(marked == 1 ? "" : "s")")
    }

    /// `verified`, or `none: <reason>` for a device the gate admitted without a verified proof.
    static func proof(_ device: DeviceRecord) -> String {
        device.attested ? "verified" : "none: " + (device.unattestedReason ?? "-")
    }

    /// Apple's risk metric from the device's latest refreshed receipt, when it was stored and when
    /// the next refresh may ask; `none` before any.
    static func riskMetric(_ device: DeviceRecord) -> String {
        guard let metric = device.riskMetric else { return "none (no refreshed receipt stored)" }
        var text = "\(metric) (receipt refreshed \(CLIOutput.isoTime(device.receiptRefreshedAt ?? 0))"
        if let after = device.receiptRefreshAfter { text += ", next refresh after \(CLIOutput.isoTime(after))" }
        return text + ")"
    }

    static func details(_ device: DeviceRecord) -> String {
        """
        id           \(device.id)
        platform     \(device.platform)
        environment  \(device.environment)
        registered   \(CLIOutput.isoTime(device.createdAt))
        last seen    \(CLIOutput.isoTime(device.lastSeenAt))
        counter      \(device.counter)
        public key   \(device.publicKey.isEmpty ? "-" : Hex.encode(device.publicKey))
        receipt      \(device.receipt.count) bytes
        risk metric  \(riskMetric(device))
        app id       \(device.appID.isEmpty ? "-" : device.appID)
        devicecheck  \(device.deviceCheckToken.isEmpty ? "no token" : "token kept")\(device.flagged ? ", flagged (attested on a phone whose bit 0 was set)" : "")
        revoked      \(device.revoked ? "yes, at " + CLIOutput.isoTime(device.revokedAt ?? 0) : "no")
        sessions     \(device.sessionsNotBefore == 0 ? "all honoured" : "issued before " + CLIOutput.isoTime(device.sessionsNotBefore) + " refused (by a revocation or a detected install credential reuse)")
        tier         \(device.tier)
        proof        \(device.attested ? "verified (attested)" : "none (unattested: \(device.unattestedReason ?? "-"))")
        """
    }
}
