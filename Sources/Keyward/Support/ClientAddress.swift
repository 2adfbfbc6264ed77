import Foundation

/// An IP address as bytes: 4 for IPv4, 16 for IPv6. An IPv4-mapped IPv6 address
/// (`::ffff:192.0.2.1`, RFC 4291 §2.5.5.2, what a dual-stack socket reports) is its IPv4 address.
public struct IPAddress: Sendable, Equatable, CustomStringConvertible {
    /// Network byte order.
    public let bytes: [UInt8]

    /// Parses the numeric forms `inet_pton(3)` reads; nil for anything else (names, ports, zones).
    public static func parse(_ text: String) -> IPAddress? {
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return IPAddress(bytes: withUnsafeBytes(of: &v4) { Array($0) })
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return IPAddress(bytes: Array(bytes.suffix(4)))
        }
        return IPAddress(bytes: bytes)
    }

    /// True for IPv4.
    public var isIPv4: Bool { bytes.count == 4 }

    /// The usual text form (`inet_ntop(3)`).
    public var description: String {
        if isIPv4 { return dottedQuad }
        var buffer = [CChar](repeating: 0, count: 64)
        var copy = bytes
        let family = isIPv4 ? AF_INET : AF_INET6
        guard inet_ntop(family, &copy, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An IPv4 address in dotted-decimal form, as `inet_ntop(3)` writes it (no leading zeros),
    /// built in place: every request's log line carries its client's address.
    private var dottedQuad: String {
        String(unsafeUninitializedCapacity: 15) { (text: UnsafeMutableBufferPointer<UInt8>) -> Int in
            var count = 0
            for (index, byte) in bytes.enumerated() {
                if index > 0 { text[count] = UInt8(ascii: "."); count += 1 }
                if byte >= 100 { text[count] = UInt8(ascii: "0") + byte / 100; count += 1 }
                if byte >= 10 { text[count] = UInt8(ascii: "0") + byte / 10 % 10; count += 1 }
                text[count] = UInt8(ascii: "0") + byte % 10
                count += 1
            }
            return count
        }
    }

    /// What the per-client handshake limiter counts as one client: an IPv4 address, or an IPv6
    /// address's /64 (one subscriber line or host gets a whole /64, RFC 6177, so limiting per
    /// /128 would let one client use 2^64 buckets).
    public var limiterKey: String {
        guard !isIPv4 else { return description }
        let network = IPAddress(bytes: Array(bytes.prefix(8)) + [UInt8](repeating: 0, count: 8))
        return network.description + "/64"
    }
}

/// An address range in CIDR form (`10.0.0.0/8`, `fd00::/8`), or one address (a /32 or /128).
public struct AddressRange: Sendable, Equatable {
    /// The network address, its host bits zero.
    public let network: IPAddress
    /// Leading bits that must match.
    public let prefixLength: Int

    /// Parses `address` or `address/length`; nil when the address or the length is not valid.
    public static func parse(_ text: String) -> AddressRange? {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress.parse(String(parts[0])) else { return nil }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...maximum).contains(parsed), parts[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            length = parsed
        }
        return AddressRange(network: IPAddress(bytes: masked(address.bytes, length)), prefixLength: length)
    }

    /// Whether `address` (same family) lies in the range.
    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && AddressRange.masked(address.bytes, prefixLength) == network.bytes
    }

    static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = min(8, max(0, length - index * 8))
            return bits == 8 ? byte : byte & UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
        }
    }
}

/// The peers `[listen] trusted_proxies` names: fronts whose forwarding headers are believed.
public struct TrustedProxies: Sendable, Equatable {
    /// The ranges; empty trusts nobody.
    public var ranges: [AddressRange] = []

    /// Trusts `ranges`.
    public init(_ ranges: [AddressRange] = []) { self.ranges = ranges }

    /// Whether `address` lies in one of the ranges.
    public func contains(_ address: IPAddress) -> Bool { ranges.contains { $0.contains(address) } }

    /// The client's address for a request that came from TCP peer `peer` with the given
    /// `X-Forwarded-For` field values (in order) and `Forwarded` values (RFC 7239 §4).
    ///
    /// Only when the peer is trusted are the headers read, `X-Forwarded-For` first, then
    /// `Forwarded`'s `for=` parameters. The hops are walked from the right (nearest) end: each
    /// trusted hop is skipped, and the first one that is not trusted is the client — a client
    /// can prepend anything it likes, but not what the trusted fronts append after it. A hop that
    /// is not an IP address (`unknown`, an obfuscated identifier, junk) ends the walk: the client
    /// is then the last trusted hop seen. When every hop is trusted, the leftmost is the client.
    public func clientAddress(peer: String, forwardedFor: [String], forwarded: [String]) -> IPAddress? {
        guard let peerAddress = IPAddress.parse(peer) else { return nil }
        guard !ranges.isEmpty, contains(peerAddress) else { return peerAddress }
        var hops = forwardedFor.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        if hops.isEmpty { hops = forwarded.flatMap(TrustedProxies.forwardedForValues) }
        var client = peerAddress
        for hop in hops.reversed() {
            guard let address = TrustedProxies.hopAddress(hop) else { break }
            client = address
            if !contains(address) { break }
        }
        return client
    }

    /// The `for=` values of `Forwarded` elements (RFC 7239 §4: `elem *( "," elem )`, pairs split
    /// by `;`, values tokens or quoted strings), in order.
    static func forwardedForValues(_ field: String) -> [String] {
        field.split(separator: ",").compactMap { element in
            for pair in element.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "for" else { continue }
                var value = parts[1].trimmingCharacters(in: .whitespaces)
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
                return value
            }
            return nil
        }
    }

    /// One hop's address: a bare IPv4 or IPv6 address, `[IPv6]` or `[IPv6]:port`, or `IPv4:port`.
    static func hopAddress(_ hop: String) -> IPAddress? {
        if let address = IPAddress.parse(hop) { return address }
        if hop.hasPrefix("["), let close = hop.firstIndex(of: "]") {
            return IPAddress.parse(String(hop[hop.index(after: hop.startIndex)..<close]))
        }
        let parts = hop.split(separator: ":")
        if parts.count == 2, let address = IPAddress.parse(String(parts[0])), address.isIPv4 { return address }
        return nil
    }
}
