import Foundation
import KeywardCrypto

/// Publishable app keys: a name for each app build and environment (`ios-prod`, `android-beta`),
/// sent by the app as `X-Keyward-App-Key` on the handshake routes when
/// `[handshake] require_app_key = true`.
///
/// They are not secrets: anyone can read one out of an app binary. They name the app and
/// environment in logs and metrics, give each its own handshake rate, and turn scanners away
/// before any other work. Several keys may carry one name, so a key can be rotated: ship the new
/// one, keep both until old builds are gone, then drop the old.
///
/// The secret `KEYWARD_APP_KEYS` lists them, one `name=key` per line (blank lines and lines
/// starting with `#` are skipped). A name is 1–64 of `a–z 0–9 . _ -`; a key is 16–128 printable
/// ASCII characters without spaces.
public struct AppKeySet: Sendable, Equatable {
    /// (name, key bytes) in the order listed.
    let entries: [(name: String, key: [UInt8])]

    /// The secret's name.
    public static let secretName = "KEYWARD_APP_KEYS"

    public static func == (lhs: AppKeySet, rhs: AppKeySet) -> Bool {
        lhs.entries.map(\.name) == rhs.entries.map(\.name) && lhs.entries.map(\.key) == rhs.entries.map(\.key)
    }

    /// The names, in the order listed (duplicates kept: a rotation).
    public var names: [String] { entries.map(\.name) }

    /// Parses the secret's text.
    /// - Throws: a message naming the line (never the key) when a line is not `name=key`, a name
    ///   or key breaks the rules, a key is listed twice, or no key is listed.
    public init(parsing text: String) throws(ServiceAssembly.Problem) {
        var entries: [(name: String, key: [UInt8])] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let place = "secret \(Self.secretName), line \(index + 1)"
            guard let equals = line.firstIndex(of: "=") else { throw ServiceAssembly.Problem("\(place): expected name=key") }
            let name = String(line[..<equals])
            let key = Array(line[line.index(after: equals)...].utf8)
            guard (1...64).contains(name.utf8.count),
                  name.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D })
            else { throw ServiceAssembly.Problem("\(place): the name must be 1–64 of a–z 0–9 . _ -") }
            guard (16...128).contains(key.count), key.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw ServiceAssembly.Problem("\(place): the key must be 16–128 printable ASCII characters without spaces")
            }
            guard !entries.contains(where: { $0.key == key }) else { throw ServiceAssembly.Problem("\(place): this key is already listed") }
            entries.append((name, key))
        }
        guard !entries.isEmpty else { throw ServiceAssembly.Problem("secret \(Self.secretName): no key listed (one name=key per line)") }
        self.entries = entries
    }

    /// The name of the key `presented` is, or nil. Compares with every key in constant time and
    /// does not stop at a match, so timing says nothing about which keys exist.
    public func name(of presented: String) -> String? {
        let bytes = Array(presented.utf8)
        var found: String?
        for entry in entries where constantTimeEquals(entry.key, bytes) && found == nil {
            found = entry.name
        }
        return found
    }
}
