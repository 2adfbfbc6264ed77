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
    /// A date that does not exist (`2026-02-30`, `2027-13-01`, `T24:00:00`) is nil, not the day
    /// the calendar would roll it over to.
    static func parseTime(_ text: String) -> Int64? {
        if let seconds = Int64(text) { return seconds }
        guard fieldsExist(text) else { return nil }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return Int64(date.timeIntervalSince1970) }
        formatter.formatOptions = [.withFullDate]
        if let date = formatter.date(from: text) { return Int64(date.timeIntervalSince1970) }
        return nil
    }

    /// Whether the `YYYY-MM-DD` that `text` starts with is a day of the Gregorian calendar and the
    /// `Thh:mm:ss` after it, if any, a time of day (00-23, 00-59, 00-60 for a leap second).
    private static func fieldsExist(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count, range.allSatisfy({ bytes[$0] >= 0x30 && bytes[$0] <= 0x39 }) else { return nil }
            return range.reduce(0) { $0 * 10 + Int(bytes[$1] - 0x30) }
        }
        guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), (1...12).contains(month)
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...days).contains(day) else { return false }
        guard bytes.count > 10 else { return true }
        guard bytes.count >= 19, bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return false }
        return hour <= 23 && minute <= 59 && second <= 60
    }
}
