import CShims
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 socket address, built from a numeric host (never resolved).
struct SocketAddress {
    private var storage = sockaddr_storage()

    /// nil when `host` is not a numeric IPv4 or IPv6 address.
    init?(host: String, port: UInt16) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                address.pointee.sin_family = sa_family_t(AF_INET)
                address.pointee.sin_port = port.bigEndian
                address.pointee.sin_addr = v4
            }
        } else if inet_pton(AF_INET6, host, &v6) == 1 {
            withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = port.bigEndian
                address.pointee.sin6_addr = v6
            }
        } else {
            return nil
        }
    }

    /// Runs `body` with a pointer to the address, valid only inside `body`.
    /// True when binding this address fails with EADDRINUSE: something listens there already.
    /// The probe socket takes SO_REUSEADDR, as the listener does, so connections of a previous
    /// run lingering in TIME_WAIT do not count; it never listens and is closed at once.
    func isTaken() -> Bool {
        withSockaddr { sockaddr in
            let probe = socket(Int32(sockaddr.pointee.sa_family), Int32(SOCK_STREAM.rawValue), 0)
            guard probe >= 0 else { return false }
            defer { close(probe) }
            var one: Int32 = 1
            _ = setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            let length = socklen_t(sockaddr.pointee.sa_family == sa_family_t(AF_INET6)
                ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
            return bind(probe, sockaddr, length) != 0 && errno == EADDRINUSE
        }
    }

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: storage) { raw in
            try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }

    /// The numeric host of a peer address (`"127.0.0.1"`, `"::1"`); `"unknown"` for other families.
    /// IPv4, the common case, is formatted here: glibc's inet_ntop goes through sprintf.
    static func numericHost(_ address: UnsafePointer<sockaddr>?) -> String {
        guard let address else { return "unknown" }
        if Int32(address.pointee.sa_family) == AF_INET {
            let ip = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
            return formatIPv4(ip)
        }
        // INET6_ADDRSTRLEN = 46 bytes including the terminator.
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 46) { buffer -> String in
            guard let base = buffer.baseAddress else { return "unknown" }
            let family = Int32(address.pointee.sa_family)
            let written: UnsafePointer<CChar>?
            switch family {
            case AF_INET:
                written = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    var ip = v4.pointee.sin_addr
                    return inet_ntop(AF_INET, &ip, base, 46)
                }
            case AF_INET6:
                written = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    var ip = v6.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &ip, base, 46)
                }
            default:
                written = nil
            }
            return written.map { String(cString: $0) } ?? "unknown"
        }
    }

    /// Dotted-quad text of a host-order IPv4 address.
    static func formatIPv4(_ ip: UInt32) -> String {
        String(unsafeUninitializedCapacity: 15) { buffer in
            var count = 0
            for shift in stride(from: 24, through: 0, by: -8) {
                let octet = Int((ip >> UInt32(shift)) & 0xFF)
                if octet >= 100 { buffer[count] = UInt8(48 + octet / 100); count += 1 }
                if octet >= 10 { buffer[count] = UInt8(48 + octet / 10 % 10); count += 1 }
                buffer[count] = UInt8(48 + octet % 10)
                count += 1
                if shift > 0 { buffer[count] = UInt8(ascii: "."); count += 1 }
            }
            return count
        }
    }
}
