import HTTPFields

/// A set of lowercase header names and name prefixes, matched against a field name ignoring ASCII
/// case (RFC 9110 §5.1) without allocating: candidates are filtered by length first, then compared
/// byte by byte over the name's contiguous UTF-8.
struct HeaderNameSet: Sendable, Equatable {
    private let names: [[UInt8]]
    private let prefixes: [[UInt8]]
    /// Shortest and longest name, to reject most fields with one comparison.
    private let shortest: Int
    private let longest: Int

    init(names: [String], prefixes: [String] = []) {
        self.names = names.map { Array(HTTPBytes.lowercased($0).utf8) }
        self.prefixes = prefixes.map { Array(HTTPBytes.lowercased($0).utf8) }
        let lengths = self.names.map(\.count) + self.prefixes.map(\.count)
        shortest = lengths.min() ?? 0
        longest = self.prefixes.isEmpty ? (lengths.max() ?? 0) : Int.max
    }

    var isEmpty: Bool { names.isEmpty && prefixes.isEmpty }

    /// Whether `name` is one of the names or starts with one of the prefixes, ignoring ASCII case.
    @inline(__always)
    func contains(_ name: String) -> Bool {
        let count = name.utf8.count
        guard !isEmpty, count >= shortest, count <= longest else { return false }
        if let found = name.utf8.withContiguousStorageIfAvailable({ matches($0) }) { return found }
        return Array(name.utf8).withUnsafeBufferPointer { matches($0) }
    }

    /// Whether the name in `bytes` is one of the names or starts with one of the prefixes, ignoring ASCII case.
    func contains(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !isEmpty, bytes.count >= shortest, bytes.count <= longest else { return false }
        return matches(bytes)
    }

    private func matches(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for candidate in names where candidate.count == bytes.count {
            if HeaderNameSet.equalLowered(bytes, candidate, count: candidate.count) { return true }
        }
        for prefix in prefixes where prefix.count <= bytes.count {
            if HeaderNameSet.equalLowered(bytes, prefix, count: prefix.count) { return true }
        }
        return false
    }

    @inline(__always)
    private static func equalLowered(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: [UInt8], count: Int) -> Bool {
        lowercase.withUnsafeBufferPointer { candidate in
            var index = 0
            while index < count {
                if HTTPBytes.lower(bytes[index]) != candidate[index] { return false }
                index += 1
            }
            return true
        }
    }
}
