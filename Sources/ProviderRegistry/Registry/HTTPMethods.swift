/// The request methods an allow rule can expect clients to send, and the nearest one to a typo.
enum HTTPMethods {
    /// RFC 9110 §9.3 (TRACE and CONNECT are refused outright), PATCH (RFC 5789), the WebDAV
    /// methods (RFC 4918, RFC 3253 REPORT, RFC 5323 SEARCH) and QUERY (the safe method with a body
    /// drafted by the IETF HTTP working group).
    static let known: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH",
        "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "REPORT", "SEARCH", "QUERY",
    ]

    /// The known method at the smallest edit distance from `method` (insertions, deletions,
    /// substitutions and swaps of neighbours each count 1), when that distance is at most 2;
    /// ties go to the shorter, then alphabetically first.
    static func closest(to method: String) -> String? {
        let typed = Array(method.utf8)
        var best: (method: String, distance: Int)?
        for candidate in known.sorted(by: { ($0.count, $0) < ($1.count, $1) }) {
            let distance = editDistance(typed, Array(candidate.utf8))
            if distance <= 2, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.method
    }

    /// Optimal string alignment distance (Levenshtein with adjacent transpositions).
    private static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, table[i - 2][j - 2] + 1) }
                table[i][j] = value
            }
        }
        return table[a.count][b.count]
    }
}
