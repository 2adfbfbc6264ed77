/// An allowlist path glob over canonical segments: `/v1/chat/completions`, `/v1/models/*`,
/// `/v1/files/*/content`. `*` stands for one or more whole segments; every other segment matches
/// one decoded segment exactly (case-sensitive, as paths are: RFC 3986 §6.2.2.1).
public struct PathPattern: Sendable, Equatable, CustomStringConvertible {
    /// One pattern segment.
    public enum Segment: Sendable, Equatable {
        case literal(String)
        /// One or more whole segments.
        case wildcard
    }

    public let segments: [Segment]
    /// The pattern as written in providers.toml.
    public let description: String

    /// Most `*` a pattern may hold (keeps matching cheap and patterns readable).
    public static let maximumWildcards = 4

    /// Parses a pattern written in decoded form.
    /// - Throws: a message when the pattern does not start with `/`, has empty or dot segments,
    ///   a `*` inside a segment, `%` (no decoded path can contain it), a backslash or control characters,
    ///   or more than four `*`.
    static func parse(_ text: String) throws(PatternProblem) -> PathPattern {
        guard text.hasPrefix("/") else { throw PatternProblem("must start with /") }
        let pieces = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var segments: [Segment] = []
        var wildcards = 0
        for piece in pieces {
            if piece.isEmpty { throw PatternProblem("must not contain empty segments (// or a trailing /)") }
            if piece == "*" {
                wildcards += 1
                segments.append(.wildcard)
                continue
            }
            if piece == "." || piece == ".." { throw PatternProblem("must not contain . or .. segments") }
            if piece.contains("*") { throw PatternProblem("* must be a whole segment (it matches one or more segments)") }
            if piece.contains("%") { throw PatternProblem("is written decoded: % can never match (encoded % is refused)") }
            if piece.contains("\\") { throw PatternProblem("must not contain backslashes") }
            if piece.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { throw PatternProblem("must not contain control characters") }
            if piece.contains("?") || piece.contains("#") { throw PatternProblem("matches the path only: no ? or #") }
            segments.append(.literal(String(piece)))
        }
        guard wildcards <= maximumWildcards else { throw PatternProblem("has more than \(maximumWildcards) wildcards") }
        guard segments.count <= ProxyPath.maximumSegments else { throw PatternProblem("has too many segments") }
        return PathPattern(segments: segments, description: text)
    }

    /// Whether `path` (canonical segments from `ProxyPath.canonicalSegments`) matches.
    ///
    /// `*` is read as "any one segment, then zero or more": the classic greedy wildcard match with
    /// backtracking to the last star, O(pattern × path) at worst.
    public func matches(_ path: [String]) -> Bool {
        var p = 0, s = 0
        var starPattern = -1        // index in `segments` of the last wildcard seen
        var starResume = 0          // path index where that wildcard's extra segments end
        var inStarTail = false      // currently inside the "zero or more" part of a wildcard
        while s < path.count {
            if p < segments.count, case .wildcard = segments[p] {
                // The mandatory segment of `*`.
                s += 1
                p += 1
                starPattern = p
                starResume = s
                inStarTail = true
                continue
            }
            if p < segments.count, case .literal(let literal) = segments[p], literal == path[s] {
                p += 1
                s += 1
                continue
            }
            guard inStarTail, starPattern >= 0 else { return false }
            // Let the last wildcard swallow one more segment and retry after it.
            starResume += 1
            s = starResume
            p = starPattern
        }
        return p == segments.count
    }
}

/// What is wrong with a pattern (the message only).
struct PatternProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
