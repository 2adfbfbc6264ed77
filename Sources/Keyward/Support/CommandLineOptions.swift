/// The flags of one subcommand, parsed from `--name value` pairs and bare `--switch`es.
///
/// Subcommands declare which flags take a value and which are switches; anything else is a usage
/// error (exit code 2), so a typo never passes silently. A flag given twice is a usage error too
/// (which of the two was meant cannot be told), except the flags a subcommand declares repeatable.
public struct CommandLineOptions: Sendable {
    /// A usage error: the message names the offending flag.
    public struct UsageError: Error, CustomStringConvertible, Sendable {
        /// The message printed before the subcommand's usage, e.g. `missing --file`.
        public let description: String
        /// Wraps `description` as is.
        public init(_ description: String) { self.description = description }
    }

    /// Flag values by name without the leading `--` (a repeatable flag keeps every value in order).
    public private(set) var values: [String: [String]] = [:]
    /// Switches that were present, by name without the leading `--`.
    public private(set) var switches: Set<String> = []
    /// Arguments that are not flags, in order.
    public private(set) var positional: [String] = []

    /// Parses `arguments` (without the program and subcommand names).
    /// - Parameters:
    ///   - valueFlags: names of flags that take one value (`--file F` or `--file=F`).
    ///   - switchFlags: names of flags that take none.
    ///   - repeatableFlags: names of value flags that may be given more than once (each value is
    ///     kept, in order); they need not be listed in `valueFlags` too.
    /// - Throws: `UsageError` for an unknown flag, a missing value, a value given to a switch, or a
    ///   flag that is not repeatable given twice (`--device given more than once`).
    public init(_ arguments: [String], valueFlags: Set<String>, switchFlags: Set<String> = [], repeatableFlags: Set<String> = []) throws {
        let valueFlags = valueFlags.union(repeatableFlags)
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if switchFlags.contains(name) {
                guard inlineValue == nil else { throw UsageError("--\(name) takes no value") }
                guard switches.insert(name).inserted else { throw UsageError("--\(name) given more than once; give it once") }
            } else if valueFlags.contains(name) {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                guard values[name] == nil || repeatableFlags.contains(name) else {
                    throw UsageError("--\(name) given more than once; give it once")
                }
                values[name, default: []].append(value)
            } else {
                throw UsageError("unknown flag --\(name)")
            }
        }
    }

    /// The value given for `name` (the last one of a repeatable flag), or nil.
    public func value(_ name: String) -> String? { values[name]?.last }

    /// The value given for `name` (the last one of a repeatable flag).
    /// - Throws: `UsageError` (`missing --name`) when the flag was not given.
    public func required(_ name: String) throws -> String {
        guard let value = value(name) else { throw UsageError("missing --\(name)") }
        return value
    }

    /// Whether the switch `name` was given.
    public func has(_ name: String) -> Bool { switches.contains(name) }
}
