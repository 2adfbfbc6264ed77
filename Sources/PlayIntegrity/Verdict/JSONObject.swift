import Foundation

/// Small helpers over Foundation's `JSONSerialization` for the loosely typed JSON Google sends.
enum JSONObject {
    /// Parses UTF-8 JSON text that must be one object.
    /// - Throws: `rejected` `verdict_malformed` naming `what` (never echoing the text).
    static func parse(_ bytes: [UInt8], what: String) throws(PlayIntegrityError) -> [String: Any] {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(bytes))
        } catch {
            throw .rejected(reason: "verdict_malformed", detail: "\(what) is not JSON")
        }
        guard let object = parsed as? [String: Any] else {
            throw .rejected(reason: "verdict_malformed", detail: "\(what) is not a JSON object")
        }
        return object
    }

    /// An int64 sent the proto3-JSON way (a decimal string, RFC 8259 has no 64-bit integers) or as a
    /// plain integral number; `nil` for anything else, including fractions and out-of-range values.
    static func int64(_ value: Any?) -> Int64? {
        if let text = value as? String {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return Int64(text)
        }
        if let number = value as? NSNumber, !(value is Bool) {
            return Int64(exactly: number.doubleValue)
        }
        return nil
    }

    /// An array of strings; non-string elements are dropped (they cannot vouch for anything).
    static func strings(_ value: Any?) -> [String]? {
        guard let array = value as? [Any] else { return nil }
        return array.compactMap { $0 as? String }
    }
}
