import Keyward
import KeywardCrypto
import Store

/// `keyward devices list|show|revoke|unrevoke`: the operator's view of attested devices.
enum DevicesCommand {
    static let usage = """
        usage: keyward devices list    [--config FILE] [--before DATE]
               keyward devices show    [--config FILE] --id ID
               keyward devices revoke  [--config FILE] (--id ID | --before DATE (--dry-run | --yes))
               keyward devices unrevoke [--config FILE] --id ID

        DATE is 2026-11-29, 2026-11-29T13:05:00Z or unix seconds. `revoke --before` revokes every
        device attested before that time (for example after a compromised build was withdrawn):
        with --dry-run it lists them and says how many it would revoke; --yes revokes them; with
        neither it only says how many there are and exits 2.
        A revoked device's sessions stop working within 60 s; it cannot attest or assert again.

        exit codes: 0 done, 1 not found or failure, 2 usage error
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let options = CLIOutput.options(arguments, command: "devices", usage: usage, valueFlags: ["config", "id", "before"],
                                               switchFlags: ["dry-run", "yes"], positional: 1...1)
        else { return 2 }
        if options.has("help") { print(usage); return 0 }
        guard let action = options.positional.first, options.positional.count == 1,
              ["list", "show", "revoke", "unrevoke"].contains(action)
        else {
            CLIOutput.error("keyward devices: expected one of list, show, revoke, unrevoke\n\n\(usage)")
            return 2
        }
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
            guard (id == nil) != (before == nil) else {
                CLIOutput.error("keyward devices revoke: give --id or --before (one of them)\n\n\(usage)")
                return 2
            }
            guard !(options.has("dry-run") && options.has("yes")), before != nil || !(options.has("dry-run") || options.has("yes")) else {
                CLIOutput.error("keyward devices revoke: --dry-run and --yes go with --before, one of them\n\n\(usage)")
                return 2
            }
        default:
            guard !options.has("dry-run"), !options.has("yes") else {
                CLIOutput.error("keyward devices \(action): --dry-run and --yes belong to revoke --before\n\n\(usage)")
                return 2
            }
        }
        guard let configuration = CLIOutput.configuration(options, command: "devices") else { return 1 }
        do {
            let store = try ServiceAssembly.store(configuration)
            let now = SystemTimeSource().nowSeconds()
            switch action {
            case "list":
                let devices = try store.listDevices(attestedBefore: before)
                print("id                                                                platform  env          attested              last seen             counter  revoked")
                for device in devices { print(row(device)) }
                print("\(devices.count) device\(devices.count == 1 ? "" : "s")")
            case "show":
                guard let device = try store.device(id: id ?? "") else {
                    CLIOutput.error("keyward devices show: no device \(id ?? "")")
                    return 1
                }
                print(details(device))
            case "revoke" where before != nil:
                let devices = try store.listDevices(attestedBefore: before).filter { !$0.revoked }
                let what = "\(devices.count) device\(devices.count == 1 ? "" : "s") attested before \(CLIOutput.isoTime(before ?? 0))"
                if options.has("dry-run") {
                    for device in devices { print(row(device)) }
                    print("would revoke \(what) (dry run: nothing changed)")
                } else if options.has("yes") {
                    for device in devices { _ = try store.setRevoked(deviceID: device.id, true, now: now) }
                    print("revoked \(what)")
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
            }
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
            + pad(String(device.counter), 8) + " " + (device.revoked ? "yes" : "no")
    }

    static func details(_ device: DeviceRecord) -> String {
        """
        id           \(device.id)
        platform     \(device.platform)
        environment  \(device.environment)
        attested     \(CLIOutput.isoTime(device.createdAt))
        last seen    \(CLIOutput.isoTime(device.lastSeenAt))
        counter      \(device.counter)
        public key   \(device.publicKey.isEmpty ? "-" : Hex.encode(device.publicKey))
        receipt      \(device.receipt.count) bytes
        revoked      \(device.revoked ? "yes, at " + CLIOutput.isoTime(device.revokedAt ?? 0) : "no")
        """
    }
}
