import Keyward
/// `keyward migrate`: applies the store's pending migrations (serve does it too at start).
enum MigrateCommand {
    static let usage = """
        usage: keyward migrate [--config FILE]

        Creates or upgrades the store named in keyward.toml (SQLite file or PostgreSQL database).
        Migrations are numbered, recorded, and applied once; running it again changes nothing.

        exit codes: 0 store up to date, 1 failure, 2 usage error
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let options = CLIOutput.options(arguments, command: "migrate", usage: usage, valueFlags: ["config"]) else { return 2 }
        if options.has("help") { print(usage); return 0 }
        guard let configuration = CLIOutput.configuration(options, command: "migrate") else { return 1 }
        do {
            _ = try ServiceAssembly.store(configuration)
            print("keyward migrate: \(ServiceAssembly.redacted(configuration.storeURL)): every migration applied")
            return 0
        } catch {
            CLIOutput.error("keyward migrate: " + CLIOutput.oneLine(error))
            return 1
        }
    }
}
