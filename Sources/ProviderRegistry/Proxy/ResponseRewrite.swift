import HTTPFields

/// What the client receives of the upstream's response headers.
public enum ResponseRewrite {
    /// The upstream headers in order, minus `Set-Cookie`/`Set-Cookie2`, hop-by-hop fields (RFC 9110
    /// §7.6.1) including those named by `Connection`, `Alt-Svc`, `Access-Control-*`, and any header whose
    /// name or value contains the injected key in any form the credential knows (raw, percent-encoded,
    /// Basic token), in any letter case.
    /// `Content-Length` goes too when the upstream also sent `Transfer-Encoding` (RFC 9112 §6.3: the
    /// coding wins, and a proxy must remove the length before forwarding).
    public static func clientHeaders(
        _ upstream: [(name: String, value: String)], credential: ProviderCredential
    ) -> [(name: String, value: String)] {
        var framing = HeadFraming()
        for field in upstream { framing.note(field) }
        let judged = framing.finished()
        return upstream.filter { passes($0, framing: judged, credential: credential) }
    }

    /// ``clientHeaders(_:credential:)`` for unlabeled `(name, value)` fields, appended to `headers`,
    /// skipping every field `skipped` accepts as well: the proxy's path, which adds fields of its own.
    public static func appendClientHeaders(
        _ upstream: [(String, String)], credential: ProviderCredential, to headers: inout [(String, String)],
        skipping skipped: (String) -> Bool = { _ in false }
    ) {
        // The head is judged without the skipped fields, as if they had never been sent.
        var framing = HeadFraming()
        for field in upstream where !skipped(field.0) { framing.note((name: field.0, value: field.1)) }
        let judged = framing.finished()
        for field in upstream where !skipped(field.0) && passes((name: field.0, value: field.1), framing: judged, credential: credential) {
            headers.append(field)
        }
    }

    /// What the whole head decides about each of its fields: the names `Connection` nominates, and
    /// whether a transfer coding frames the body. Gathered field by field in one pass.
    private struct HeadFraming {
        private var nominatedNames: [String] = []
        private(set) var nominated: HeaderNameSet?
        private(set) var hasTransferCoding = false

        mutating func note(_ field: (name: String, value: String)) {
            if HTTPBytes.equalsIgnoringCase(field.name, staticLowercased: "connection") {
                HeaderRules.nominate(fromConnection: field.value, into: &nominatedNames)
            } else if HTTPBytes.equalsIgnoringCase(field.name, staticLowercased: "transfer-encoding") {
                hasTransferCoding = true
            }
        }

        /// The framing once every field has been noted.
        func finished() -> HeadFraming {
            var framing = self
            framing.nominated = nominatedNames.isEmpty ? nil : HeaderNameSet(names: nominatedNames)
            return framing
        }
    }

    /// Whether the client receives `field` of a head with `framing`.
    private static func passes(
        _ field: (name: String, value: String), framing: HeadFraming, credential: ProviderCredential
    ) -> Bool {
        if HeaderRules.responseDroppedSet.contains(field.name) || framing.nominated?.contains(field.name) == true {
            return false
        }
        if framing.hasTransferCoding && HTTPBytes.equalsIgnoringCase(field.name, staticLowercased: "content-length") { return false }
        return !echoesKey(field, credential: credential)
    }

    /// Whether a field's name or value carries the key in a form the credential knows, in any
    /// letter case, also once every `%XX` escape in it is decoded: an upstream that escapes more
    /// than it must (`sk%2Dkey` for `sk-key`) still echoes the key (RFC 3986 §2.1: `%2D` and `-`
    /// are equivalent for unreserved characters).
    static func echoesKey(_ field: (name: String, value: String), credential: ProviderCredential) -> Bool {
        carriesKey(field.name, credential) || carriesKey(field.value, credential)
    }

    private static func carriesKey(_ text: String, _ credential: ProviderCredential) -> Bool {
        // Decoding `%XX` only shortens a text: one shorter than every form holds none, decoded or not.
        guard text.utf8.count >= credential.shortestSensitiveForm else { return false }
        var text = text
        return text.withUTF8 { bytes in
            if credential.sensitiveForms.contains(where: { HTTPBytes.containsIgnoringCase(bytes, $0) }) { return true }
            guard bytes.contains(UInt8(ascii: "%")) else { return false }
            let decoded = PercentEncoding.decodeLeniently(bytes)
            return credential.sensitiveForms.contains(where: { HTTPBytes.containsIgnoringCase(decoded, $0) })
        }
    }

    /// The body length a response head declares: its one `Content-Length` field (RFC 9110 §8.6),
    /// digits only, at most 15 of them. Nil when there is none, when it is malformed, or when there
    /// are several (even equal ones: whoever wants to use them must frame the body the careful way).
    public static func declaredContentLength(_ headers: [(String, String)]) -> Int? {
        var length: Int?
        for (name, value) in headers where HTTPBytes.equalsIgnoringCase(name, staticLowercased: "content-length") {
            guard length == nil, !value.isEmpty, value.utf8.count <= 15,
                  value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let parsed = Int(value)
            else { return nil }
            length = parsed
        }
        return length
    }
}
