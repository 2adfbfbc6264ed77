import Foundation
import KeywardSupport

/// Where secrets come from: never the TOML files, which are meant to be checked in.
///
/// A secret NAME is looked up, in order, as the environment variable `NAME`, the file named by the
/// environment variable `NAME_FILE` (Kubernetes secrets, Docker secrets), and the file `NAME` in
/// `$CREDENTIALS_DIRECTORY` (systemd `LoadCredential=`). One trailing newline (LF or CRLF) is
/// dropped, from a file or a variable alike (a variable filled from a file, as Kubernetes does with
/// `--from-file`, keeps the file's newline); a second one stays, and a provider key refuses it.
/// Values are read at start-up and on reload, never per request.
public struct SecretSource: Sendable {
    /// The variables consulted; the process environment by default, a fixed table in tests.
    public let environment: [String: String]

    /// Looks secrets up in `environment` (a snapshot: later changes to the process are not seen).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// Why a secret could not be had. The description names the secret and where it was looked
    /// for, never its value.
    public struct Missing: Error, CustomStringConvertible, Sendable {
        /// The secret's name, e.g. `OPENAI_API_KEY`.
        public let name: String
        /// Where it was looked for, or the file that could not be read or was empty.
        public let detail: String
        /// True when the secret is configured nowhere; false when a configured file is unreadable or empty.
        public let isAbsent: Bool
        /// True when a configured file was read and is empty (after its trailing newline).
        public var isEmptyFile: Bool = false
        /// `secret <name>: <detail>`.
        public var description: String { "secret \(name): \(detail)" }
    }

    /// The secret's value, or `Missing` naming the places tried (or the file that could not be read).
    /// An empty variable counts as unset. A file's trailing `\n` or `\r\n` is dropped.
    /// - Throws: `Missing`: `isAbsent` when configured nowhere; otherwise the file is unreadable,
    ///   not UTF-8 or empty.
    public func value(_ name: String) throws(Missing) -> String {
        if let direct = environment[name], !direct.isEmpty {
            let value = Self.droppingOneFinalNewline(direct)
            guard !value.isEmpty else { throw Missing(name: name, detail: "$\(name) holds only a newline", isAbsent: false) }
            return value
        }
        if let path = environment[name + "_FILE"], !path.isEmpty { return try read(path, for: name) }
        if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
            let path = directory + "/" + name
            if FileManager.default.fileExists(atPath: path) { return try read(path, for: name) }
        }
        throw Missing(
            name: name, detail: "not set (looked for $\(name), $\(name)_FILE and $CREDENTIALS_DIRECTORY/\(name))", isAbsent: true)
    }

    /// The secret's value, or nil when it is not configured anywhere (unreadable files still throw).
    public func optionalValue(_ name: String) throws(Missing) -> String? {
        do {
            return try value(name)
        } catch {
            if error.isAbsent { return nil }
            throw error
        }
    }

    /// A secret file's text. Anything but a regular file (a named pipe, a directory) is refused
    /// before it is read, so a FIFO named by `NAME_FILE` fails at once instead of blocking start-up.
    private func read(_ path: String, for name: String) throws(Missing) -> String {
        let bytes: [UInt8]
        do { bytes = try RegularFile.read(path, limit: 4 << 20) } catch {
            switch error {
            case .notRegular, .tooLarge: throw Missing(name: name, detail: "\(path): \(error)", isAbsent: false)
            case .cannotOpen, .cannotRead: throw Missing(name: name, detail: "cannot read \(path)", isAbsent: false)
            }
        }
        guard let raw = String(validating: bytes, as: UTF8.self) else {
            throw Missing(name: name, detail: "cannot read \(path)", isAbsent: false)
        }
        let text = Self.droppingOneFinalNewline(raw)
        guard !text.isEmpty else {
            var missing = Missing(name: name, detail: "\(path) is empty", isAbsent: false)
            missing.isEmptyFile = true
            throw missing
        }
        return text
    }

    /// `text` less one final "\n" or "\r\n" (in Swift "\r\n" is one Character).
    static func droppingOneFinalNewline(_ text: String) -> String {
        text.last == "\n" || text.last == "\r\n" ? String(text.dropLast()) : text
    }
}
