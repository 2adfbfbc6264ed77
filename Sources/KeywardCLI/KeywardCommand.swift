import CShims
import Foundation
import Keyward

/// The `keyward` command line: one entry per subcommand.
///
/// Exit codes, for every subcommand: 0 success, 1 the thing checked is invalid or the operation
/// failed, 2 usage error.
public enum KeywardCommand {
    /// A subcommand: its one-line summary and its entry point (arguments after its name → exit code).
    struct Subcommand: Sendable {
        let summary: String
        let run: @Sendable ([String]) -> Int32
    }

    static let subcommands: [(name: String, command: Subcommand)] = [
        ("serve", Subcommand(summary: "run the proxy (SIGHUP reloads providers, SIGTERM stops)", run: ServeCommand.run)),
        ("check-config", Subcommand(summary: "validate keyward.toml, providers.toml and the secrets they name", run: CheckConfigCommand.run)),
        ("migrate", Subcommand(summary: "create or upgrade the store", run: MigrateCommand.run)),
        ("devices", Subcommand(summary: "list, show, revoke or unrevoke attested devices", run: DevicesCommand.run)),
        ("keys", Subcommand(summary: "generate or rotate the session signing key", run: KeysCommand.run)),
        ("sessions", Subcommand(summary: "mint a session for smoke and load tests", run: SessionsCommand.run)),
        ("demo", Subcommand(summary: "run the whole story on 127.0.0.1 with a simulated iPhone and a fake provider", run: DemoForwardCommand.run)),
        ("inspect", Subcommand(summary: "check an App Attest attestation, assertion or receipt step by step", run: InspectCommand.run)),
    ]

    /// Keyward's version, printed by `keyward --version`.
    public static let version = "0.1.0"

    /// Runs the command line `arguments` (without the program name) and returns the exit code:
    /// 0, 1 or 2 as above (no subcommand is a usage error, 2; `--help` alone is 0).
    public static func run(_ arguments: [String]) -> Int32 {
        // Line by line, even into a pipe or a file: `demo --keep-running` prints its session and
        // then serves until stopped, and a supervisor or `tee` must see that before the exit.
        kw_line_buffer_stdout()
        if arguments.first == "--version" || arguments.first == "version" {
            print("keyward \(version)")
            return 0
        }
        guard let name = arguments.first, name != "--help", name != "-h", name != "help" else {
            printUsage(to: arguments.isEmpty ? .standardError : .standardOutput)
            return arguments.isEmpty ? 2 : 0
        }
        guard let entry = subcommands.first(where: { $0.name == name }) else {
            FileHandle.standardError.write(Data("keyward: unknown subcommand '\(name)'\n".utf8))
            printUsage(to: .standardError)
            return 2
        }
        return entry.command.run(Array(arguments.dropFirst()))
    }

    static func printUsage(to handle: FileHandle) {
        var text = "usage: keyward <subcommand> [flags]   (keyward <subcommand> --help for its flags)\n\n"
        for (name, command) in subcommands {
            text += "  \(name.padding(toLength: 14, withPad: " ", startingAt: 0)) \(command.summary)\n"
        }
        text += "\nexit codes: 0 ok, 1 invalid input or failure, 2 usage error\n"
        handle.write(Data(text.utf8))
    }
}
