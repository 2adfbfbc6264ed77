import Foundation
import Keyward

/// Small output helpers shared by the subcommands.
enum CLIOutput {
    /// Writes `text` and a newline to standard error.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// `error` as one line: a Foundation file error as the file and what went wrong (its
    /// description is a multi-line dump of domains and user info), anything else with its line
    /// breaks folded into "; ".
    static func oneLine(_ error: any Error) -> String {
        let nsError = error as NSError
        if nsError.domain == NSCocoaErrorDomain, let path = nsError.userInfo[NSFilePathErrorKey] as? String {
            let posix = (nsError.userInfo[NSUnderlyingErrorKey] as? NSError).flatMap { $0.domain == NSPOSIXErrorDomain ? $0 : nil }
            let underlying = posix.map { String(cString: strerror(Int32($0.code))) }
            return "\(path): \(underlying ?? nsError.localizedDescription)"
        }
        return "\(error)".split(whereSeparator: \.isNewline).joined(separator: "; ")
    }

    /// Parses flags or prints the usage error and the subcommand's usage; nil means "exit 2".
    /// - Parameter positional: how many bare arguments the subcommand takes (an action name).
    static func options(
        _ arguments: [String], command: String, usage: String, valueFlags: Set<String>, switchFlags: Set<String> = [],
        positional: ClosedRange<Int> = 0...0
    ) -> CommandLineOptions? {
        do {
            let options = try CommandLineOptions(arguments, valueFlags: valueFlags, switchFlags: switchFlags.union(["help"]))
            guard options.has("help") || positional.contains(options.positional.count) else {
                throw CommandLineOptions.UsageError(
                    options.positional.isEmpty ? "missing an action" : "unexpected argument '\(options.positional.last ?? "")'")
            }
            return options
        } catch {
            Self.error("keyward \(command): \(error)\n\n\(usage)")
            return nil
        }
    }

    /// The configuration file a subcommand reads: `--config`, else `$KEYWARD_CONFIG`, else `keyward.toml`.
    static func configPath(_ options: CommandLineOptions) -> String {
        options.value("config") ?? ProcessInfo.processInfo.environment["KEYWARD_CONFIG"] ?? "keyward.toml"
    }

    /// Loads `keyward.toml`, printing every error with file and line; nil on failure.
    static func configuration(_ options: CommandLineOptions, command: String) -> KeywardConfiguration? {
        let path = configPath(options)
        do {
            return try KeywardConfiguration.load(path: path)
        } catch {
            Self.error("keyward \(command): \(error)")
            return nil
        }
    }

    /// Unix seconds as `2026-11-29T13:05:00Z`.
    static func isoTime(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// `2026-11-29`, `2026-11-29T13:05:00Z` or unix seconds → unix seconds.
    static func parseTime(_ text: String) -> Int64? {
        if let seconds = Int64(text) { return seconds }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return Int64(date.timeIntervalSince1970) }
        formatter.formatOptions = [.withFullDate]
        if let date = formatter.date(from: text) { return Int64(date.timeIntervalSince1970) }
        return nil
    }
}
