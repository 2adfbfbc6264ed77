import HTTPServer

/// The `Idempotency-Key` request field of a proxied call: absent, or 1-255 visible ASCII
/// characters (`%x21-7E`, as the IETF draft "The Idempotency-Key HTTP Header Field" and payment
/// APIs take it). A field that is present but cannot make a claim is refused rather than ignored:
/// ignoring it would charge every retry of a client that believes it is covered.
enum IdempotencyKey {
    /// Longest key, bytes.
    static let maximumBytes = 255

    /// The key `head` carries, nil without the field.
    /// - Throws: `bad_request` with reason `idempotency_key_repeated` (the field more than once),
    ///   `idempotency_key_empty`, `idempotency_key_too_long` (over 255 bytes) or
    ///   `idempotency_key_invalid` (a byte outside `%x21-7E`).
    static func value(of head: HTTPRequestHead) throws(APIError) -> String? {
        let fields = head.headers(named: "idempotency-key")
        // RFC 9110 §5.5: whitespace around a field value is not part of it.
        guard let value = fields.first.map({ String($0.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()) })
        else { return nil }
        guard fields.count == 1 else { throw APIError(.badRequest, reason: "idempotency_key_repeated") }
        guard !value.isEmpty else { throw APIError(.badRequest, reason: "idempotency_key_empty") }
        guard value.utf8.count <= maximumBytes else { throw APIError(.badRequest, reason: "idempotency_key_too_long") }
        guard value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw APIError(.badRequest, reason: "idempotency_key_invalid") }
        return value
    }
}
