/// The shared state of one `TOMLDocument.decode` pass: problems found so far and which keys the
/// model read, so that keys nobody read can be reported as unknown.
///
/// Decoding keeps going after a problem (the decoder hands back a placeholder) so that one pass
/// reports every problem; the placeholders never escape because any recorded problem fails the decode.
final class TOMLDecodingSession {
    let document: TOMLDocument
    private(set) var errors: [ConfigError] = []
    /// True when an error was thrown out of a model's own `init(from:)`: decoding stopped early.
    private(set) var aborted = false
    /// Rendered paths of table entries the model read.
    private var visited: Set<String> = []
    /// Tables the model opened as keyed containers, with the keys it declares (when its CodingKeys are CaseIterable).
    private var opened: [TOMLKeyPath: [String]] = [:]

    init(document: TOMLDocument) { self.document = document }

    func record(_ message: String, at path: TOMLKeyPath) {
        errors.append(document.error(message, at: path))
    }

    func typeMismatch(expected: String, found: TOMLValue, at path: TOMLKeyPath) {
        record("expected \(expected), found \(found.kindDescription)", at: path)
    }

    func markVisited(_ path: TOMLKeyPath) { visited.insert(path.description) }

    func markOpened(_ path: TOMLKeyPath, knownKeys: [String]) { opened[path] = knownKeys }

    /// Records an error thrown by a model's `init(from:)` (e.g. a `DecodingError`), locating it by its coding path.
    func record(thrown error: any Error) {
        aborted = true
        guard let decodingError = error as? DecodingError else {
            record("invalid value (\(error))", at: .root)
            return
        }
        switch decodingError {
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context):
            record(context.debugDescription, at: TOMLKeyPath(codingPath: context.codingPath))
        @unknown default:
            record("invalid value", at: .root)
        }
    }

    /// One error for every entry of an opened table that the model never read.
    func unknownKeyErrors() -> [ConfigError] {
        var result: [ConfigError] = []
        for (tablePath, knownKeys) in opened {
            guard case .table(let entries)? = document.value(at: tablePath) else { continue }
            for entry in entries {
                let entryPath = tablePath.appending(entry.key)
                guard !visited.contains(entryPath.description) else { continue }
                var message = "unknown key"
                if let suggestion = TOMLDecodingSession.closest(to: entry.key, among: knownKeys) {
                    message += " (did you mean `\(suggestion)`?)"
                }
                result.append(document.error(message, at: entryPath))
            }
        }
        return result
    }

    /// The known key within edit distance 2 of `key` (a likely typo), if exactly one is nearest.
    static func closest(to key: String, among known: [String]) -> String? {
        var best: (key: String, distance: Int)?
        for candidate in known {
            let distance = editDistance(Array(key.utf8), Array(candidate.utf8))
            if distance <= 2, distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        return best?.key
    }

    /// Levenshtein distance over bytes (keys are short ASCII).
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

extension TOMLKeyPath {
    /// The path a `Decoder`'s coding path denotes (this decoder's index keys, or any key with an
    /// integer value, are array indices).
    init(codingPath: [any CodingKey]) {
        self.init(codingPath.map { key -> Component in
            if let ours = key as? TOMLCodingKey { return ours.isIndex ? .index(ours.intValue ?? 0) : .key(ours.stringValue) }
            if let index = key.intValue { return .index(index) }
            return .key(key.stringValue)
        })
    }
}

/// The coding keys this decoder puts in coding paths.
struct TOMLCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    let isIndex: Bool

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
        self.isIndex = false
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
        self.isIndex = true
    }
}
