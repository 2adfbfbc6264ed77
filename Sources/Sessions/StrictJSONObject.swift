import KeywardSupport

/// The stricter reading of JSON that JOSE asks for, checked before a header or claims set is decoded.
///
/// RFC 7515 §4 and RFC 7519 §4: a header or claims set with duplicate member names is refused
/// (Foundation's decoder keeps one of them silently, and another verifier may keep the other).
/// Beyond RFC 8259 grammar, Keyward refuses what it never writes and a different parser could
/// read differently: a leading byte-order mark (RFC 8259 §8.1: must not be added), and numbers
/// that are not plain integers (`1.0`, `1e3`: NumericDate is read as an integer here, RFC 7519 §2).
/// The handshake and admin request bodies are read by the same rules before they are decoded, so
/// no body means one thing to Keyward and another to a client library or a log reader.
package enum StrictJSONObject {
    /// Deepest nesting accepted; Keyward's own tokens have depth 1.
    static let maximumDepth = 8

    /// The top-level member names of `bytes`, decoded, when it is one JSON object that keeps the
    /// rules above at every depth; nil otherwise.
    package static func memberNames(_ bytes: [UInt8]) -> Set<String>? {
        StrictJSON.memberNames(bytes, options: options)
    }

    /// The first rule `bytes` breaks, nil when it is one JSON object that keeps them all (then
    /// ``memberNames(_:)`` is non-nil): for naming the refusal once a body was found wanting.
    package static func failure(_ bytes: [UInt8]) -> StrictJSON.Failure? {
        do throws(StrictJSON.Failure) {
            _ = try StrictJSON.object(bytes, options: options)
            return nil
        } catch {
            return error
        }
    }

    private static var options: StrictJSON.Options { StrictJSON.Options(maximumDepth: maximumDepth, integersOnly: true) }
}
