import COpenSSL

/// ASN.1 UTCTime / GeneralizedTime (RFC 5280 §4.1.2.5) ↔ unix seconds.
enum ASN1Time {
    /// Unix seconds (UTC) of an ASN.1 time, or `nil` if OpenSSL cannot read it.
    static func unixSeconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else {
            clearOpenSSLErrors()
            return nil
        }
        let days = daysFromCivil(year: Int64(parts.tm_year) + 1900, month: Int64(parts.tm_mon) + 1, day: Int64(parts.tm_mday))
        return days * 86_400 + Int64(parts.tm_hour) * 3600 + Int64(parts.tm_min) * 60 + Int64(parts.tm_sec)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-compatible
    /// low-level date algorithms", days_from_civil), so no libc time-zone state is involved.
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
