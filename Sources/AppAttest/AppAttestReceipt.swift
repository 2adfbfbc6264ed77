/// The fields of one App Attest receipt, read from its payload (Apple, "Assessing fraud risk",
/// "Understand the receipt"; field numbers in ``ReceiptAttribute``).
///
/// Required in every receipt: App ID (2), attested public key certificate (3), token (5), receipt
/// type (6), creation time (12), expiration time (21). A receipt of type `ATTEST` (the one inside
/// an attestation) also carries the client hash (4); one of type `RECEIPT` (from Apple's receipt
/// endpoint) carries the risk metric (17). Each known field appears at most once; unknown field
/// types are ignored (Apple may add fields), within ``ReceiptPayload``'s bounds.
public struct AppAttestReceipt: Sendable, Equatable {
    /// Field 6.
    public enum Kind: String, Sendable {
        /// The receipt an attestation object carries: no risk metric.
        case attest = "ATTEST"
        /// A receipt from Apple's receipt endpoint: carries the risk metric.
        case receipt = "RECEIPT"
    }

    /// Field 2: `teamID.bundleID`.
    public let appID: String
    /// Field 3: the credential certificate (attestation `x5c[0]`), DER.
    public let attestedKeyCertificate: [UInt8]
    /// Field 4: the clientDataHash the app passed to `attestKey`; nil when absent (`RECEIPT`).
    public let clientHash: [UInt8]?
    /// Field 5: Apple's opaque token, as sent.
    public let token: [UInt8]
    /// Field 6.
    public let kind: Kind
    /// Field 7, `production` or `sandbox`, when present (every receipt seen has it; Apple's table does not list it).
    public let environment: String?
    /// Field 12: when Apple made the receipt, unix seconds (fraction dropped).
    public let creationTime: Int64
    /// Field 17: Apple's approximate count of attested keys for this app on this device over the
    /// last 30 days; nil when absent (`ATTEST`).
    public let riskMetric: Int?
    /// Field 19: the earliest time Apple's endpoint gives a new receipt for this one, unix seconds; nil when absent.
    public let notBefore: Int64?
    /// Field 21: when the receipt expires, unix seconds.
    public let expirationTime: Int64

    /// Largest risk metric accepted (Apple's is a small count; the bound keeps it an `Int` anywhere).
    public static let maxRiskMetric = 1_000_000

    /// Reads the fields from a payload (the CMS eContent).
    /// - Throws: `AppAttestError` `.receiptFieldsMalformed` (payload syntax, a missing, repeated or
    ///   unreadable field), `.receiptTypeUnexpected` (field 6 neither `ATTEST` nor `RECEIPT`).
    public init(payload: [UInt8]) throws(AppAttestError) {
        var fields: [Int: [UInt8]] = [:]
        for attribute in try ReceiptPayload.attributes(payload) where Self.knownTypes.contains(attribute.type) {
            guard fields.updateValue(attribute.value, forKey: attribute.type) == nil else {
                throw Self.malformed("field \(attribute.type) appears more than once")
            }
        }
        func required(_ type: Int, _ name: String) throws(AppAttestError) -> [UInt8] {
            guard let value = fields[type] else { throw Self.malformed("\(name) (field \(type)) missing") }
            return value
        }
        guard let kind = Kind(rawValue: String(decoding: try required(6, "receipt type"), as: UTF8.self)) else {
            throw AppAttestError(.receiptTypeUnexpected, "receipt type (field 6) is neither ATTEST nor RECEIPT")
        }
        self.kind = kind
        appID = try Self.text(try required(2, "App ID"), "App ID")
        attestedKeyCertificate = try required(3, "attested public key")
        token = try required(5, "token")
        creationTime = try Self.time(try required(12, "creation time"), "creation time")
        expirationTime = try Self.time(try required(21, "expiration time"), "expiration time")
        environment = try fields[7].map { (value) throws(AppAttestError) in try Self.text(value, "environment") }
        notBefore = try fields[19].map { (value) throws(AppAttestError) in try Self.time(value, "not before") }
        switch kind {
        case .attest:
            clientHash = try required(4, "client hash")
            riskMetric = try fields[17].map { (value) throws(AppAttestError) in try Self.metric(value) }
        case .receipt:
            clientHash = fields[4]
            riskMetric = try Self.metric(try required(17, "risk metric"))
        }
        guard !appID.isEmpty, !attestedKeyCertificate.isEmpty else { throw Self.malformed("empty App ID or attested public key") }
    }

    static let knownTypes: Set<Int> = [2, 3, 4, 5, 6, 7, 12, 17, 19, 21]

    /// Printable ASCII (App IDs and the environment are ASCII in every receipt).
    private static func text(_ value: [UInt8], _ name: String) throws(AppAttestError) -> String {
        guard value.count <= 256, value.allSatisfy({ (0x21...0x7e).contains($0) }) else {
            throw malformed("\(name) is not printable ASCII of at most 256 bytes")
        }
        return String(decoding: value, as: UTF8.self)
    }

    /// The risk metric: ASCII decimal digits, no sign, no leading zero (other than "0").
    private static func metric(_ value: [UInt8]) throws(AppAttestError) -> Int {
        guard !value.isEmpty, value.count <= 7, value.allSatisfy({ (0x30...0x39).contains($0) }),
              value.count == 1 || value[0] != 0x30
        else { throw malformed("risk metric is not a decimal count") }
        let number = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard number <= maxRiskMetric else { throw malformed("risk metric above \(maxRiskMetric)") }
        return number
    }

    /// An RFC 3339 UTC time as Apple writes it, `2024-04-18T16:14:54.209Z` (fraction optional,
    /// 1–9 digits, dropped), as unix seconds.
    static func time(_ value: [UInt8], _ name: String) throws(AppAttestError) -> Int64 {
        guard let seconds = RFC3339UTC.seconds(value) else { throw malformed("\(name) is not an RFC 3339 UTC time") }
        return seconds
    }

    private static func malformed(_ detail: String) -> AppAttestError {
        AppAttestError(.receiptFieldsMalformed, "receipt: \(detail)")
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (RFC 3339 §5.6 with the `Z` offset only) to unix seconds.
enum RFC3339UTC {
    static func seconds(_ bytes: [UInt8]) -> Int64? {
        guard bytes.count >= 20, bytes.count <= 30, bytes.last == UInt8(ascii: "Z") else { return nil }
        func digits(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = digits(0..<4), let month = digits(5..<7), let day = digits(8..<10),
              let hour = digits(11..<13), let minute = digits(14..<16), let second = digits(17..<19)
        else { return nil }
        if bytes.count > 20 {
            // A fraction: '.' then 1–9 digits, then the final 'Z'.
            guard bytes[19] == UInt8(ascii: "."), bytes.count - 21 >= 1, bytes.count - 21 <= 9,
                  digits(20..<(bytes.count - 1)) != nil
            else { return nil }
        }
        guard year >= 1970, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60
        else { return nil }
        return Int64(daysFromCivil(year: year, month: month, day: day)) * 86_400
            + Int64(hour * 3600 + minute * 60 + second)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (the era arithmetic of H. Hinnant's
    /// `days_from_civil`).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
