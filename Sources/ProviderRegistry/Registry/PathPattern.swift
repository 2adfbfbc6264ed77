/// An allowlist path glob over canonical segments: `/v1/chat/completions`, `/v1/models/*`,
/// `/v1/files/*/content`. `*` stands for one or more whole segments; every other segment matches
/// one decoded segment exactly (case-sensitive, as paths are: RFC 3986 §6.2.2.1).
///
/// A path ending in `/` is another path (`/v1/items/` is a collection to many servers, `/v1/items`
/// a redirect or a 404): a pattern ending in `/` matches only paths ending in `/`, any other
/// pattern only paths that do not, and `*` never stands for the ending `/`. So `/v1/*/` allows
/// `/v1/items/` and `/v1/items/7/`, while `/v1/*` allows neither.
public struct PathPattern: Sendable, Equatable, CustomStringConvertible {
    /// One pattern segment.
    public enum Segment: Sendable, Equatable {
        case literal(String)
        /// One or more whole segments.
        case wildcard
    }

    /// The segments before any ending `/`.
    public let segments: [Segment]
    /// Whether the pattern ends in `/` (so matches only paths that do).
    public let endsInSlash: Bool
    /// The pattern as written in providers.toml.
    public let description: String

    /// Most `*` a pattern may hold (keeps matching cheap and patterns readable).
    public static let maximumWildcards = 4

    /// Parses a pattern written in decoded form.
    /// - Throws: a message when the pattern does not start with `/`, has empty segments (`//`; one
    ///   `/` ending it is allowed) or dot segments,
    ///   a `*` inside a segment, `%` (no decoded path can contain it), a backslash or control characters,
    ///   or more than four `*`.
    static func parse(_ text: String) throws(PatternProblem) -> PathPattern {
        guard text.hasPrefix("/") else { throw PatternProblem("must start with /") }
        var pieces = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        // One `/` ending the pattern is part of it; pieces is never empty (split keeps one piece).
        let endsInSlash = pieces.last?.isEmpty == true
        if endsInSlash { pieces.removeLast() }
        var segments: [Segment] = []
        var wildcards = 0
        for piece in pieces {
            if piece.isEmpty { throw PatternProblem("must not contain empty segments (//)") }
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
        return PathPattern(segments: segments, endsInSlash: endsInSlash, description: text)
    }

    /// Whether `path` (canonical segments from `ProxyPath.canonicalSegments`) matches.
    ///
    /// `*` is read as "any one segment, then zero or more": the classic greedy wildcard match with
    /// backtracking to the last star, O(pattern × path) at worst.
    public func matches(_ path: [String]) -> Bool {
        // The ending `/` (a last "" segment) must agree; the glob then runs over the rest.
        let pathEndsInSlash = path.last?.isEmpty == true
        guard pathEndsInSlash == endsInSlash else { return false }
        let count = pathEndsInSlash ? path.count - 1 : path.count
        var p = 0, s = 0
        var starPattern = -1        // index in `segments` of the last wildcard seen
        var starResume = 0          // path index where that wildcard's extra segments end
        var inStarTail = false      // currently inside the "zero or more" part of a wildcard
        while s < count {
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

extension PathPattern {
    /// This pattern with every literal case-folded (`PathPolicy.caseFolded`), as written otherwise:
    /// what a provider with `path_case = "insensitive"` matches lowercased paths against.
    func lowercased() -> PathPattern {
        PathPattern(
            segments: segments.map { segment in
                if case .literal(let text) = segment { return .literal(PathPolicy.caseFolded(text)) }
                return segment
            },
            endsInSlash: endsInSlash, description: description)
    }

    /// Whether every path `other` matches, this pattern matches too (so a rule with `other` after
    /// one with this pattern and the same method never decides). Sound, not complete: a literal
    /// covers only the same literal, and a `*` here covers any run of one or more of `other`'s
    /// segments, literals and `*` alike (each `*` of `other` stands for one or more segments of any
    /// content, which only a `*` here can match). O(segments²) by dynamic programming.
    public func covers(_ other: PathPattern) -> Bool {
        // A pattern and one differing in its ending `/` match no path in common.
        guard endsInSlash == other.endsInSlash else { return false }
        let mine = segments, theirs = other.segments
        // covered[i][j]: mine[i...] covers theirs[j...].
        var covered = Array(repeating: Array(repeating: false, count: theirs.count + 1), count: mine.count + 1)
        covered[mine.count][theirs.count] = true
        for i in stride(from: mine.count - 1, through: 0, by: -1) {
            for j in stride(from: theirs.count - 1, through: 0, by: -1) {
                switch (mine[i], theirs[j]) {
                case (.wildcard, _):
                    // This `*` takes theirs[j] and then either stops or takes more.
                    covered[i][j] = covered[i + 1][j + 1] || covered[i][j + 1]
                case (.literal(let a), .literal(let b)):
                    covered[i][j] = a == b && covered[i + 1][j + 1]
                case (.literal, .wildcard):
                    covered[i][j] = false
                }
            }
        }
        return covered[0][0]
    }
}

/// What is wrong with a pattern (the message only).
struct PatternProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
