import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 client over one loopback TCP socket, for tests:
/// sends exact bytes (malformed ones included) and parses what comes back.
final class RawClient {
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    enum ClientError: Error { case connect, timeout, closed, malformed(String) }

    private let fd: Int32
    private var buffer: [UInt8] = []

    /// - Parameters: `receiveBuffer`: SO_RCVBUF in bytes (set before connect), nil for the default.
    init(port: UInt16, ipv6: Bool = false, receiveTimeout: Double = 5, receiveBuffer: Int32? = nil) throws {
        fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError.connect }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout.truncatingRemainder(dividingBy: 1)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = in6addr_loopback
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw ClientError.connect
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            guard n > 0 else { throw ClientError.closed }
            sent += n
        }
    }

    /// Closes the socket now (the server sees the client leave).
    func closeNow() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Reads more bytes into the buffer. - Returns: false on EOF.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
        if n == 0 { return false }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw ClientError.timeout }
        if errno == ECONNRESET { return false }
        throw ClientError.closed
    }

    private func readLine() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 0x0A) {
                var line = Array(buffer[..<index])
                buffer.removeFirst(index + 1)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard try fill() else { throw ClientError.closed }
        }
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw ClientError.closed }
        }
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// Reads status line and headers.
    func readHead() throws -> Response {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { throw ClientError.malformed(statusLine) }
        var headers: [(String, String)] = []
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw ClientError.malformed(line) }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return Response(status: status, headers: headers, body: [])
    }

    /// Reads one chunk of a chunked body. - Returns: nil at the last chunk.
    func readChunk() throws -> [UInt8]? {
        let sizeLine = try readLine()
        guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
            throw ClientError.malformed(sizeLine)
        }
        if size == 0 {
            while try !readLine().isEmpty {}
            return nil
        }
        let data = try readExactly(size)
        _ = try readLine()
        return data
    }

    /// Reads a whole response (Content-Length, chunked, or until EOF).
    func readResponse(headRequest: Bool = false) throws -> Response {
        var response = try readHead()
        if headRequest || response.status == 204 || response.status == 304 { return response }
        if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while let chunk = try readChunk() { response.body += chunk }
        } else if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            response.body = try readExactly(length)
        } else {
            while try fill() {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    /// Sends a request and reads its response.
    func exchange(_ request: String) throws -> Response {
        try send(request)
        return try readResponse()
    }

    /// True when the server closes the connection (EOF or reset) within the receive timeout
    /// and sent nothing more.
    func isClosedByServer() -> Bool {
        do {
            while try fill() {}
            return buffer.isEmpty
        } catch {
            return false
        }
    }

    /// True when the server closes the connection (EOF or reset) within the receive timeout,
    /// whatever it sent before.
    func waitForClose() -> Bool {
        do {
            while try fill() {}
            return true
        } catch {
            return false
        }
    }

    /// Every byte the server sends until it closes the connection (EOF or reset); throws
    /// `timeout` when it neither closes nor sends within the receive timeout.
    func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// Reads `count` body bytes without framing (after `readHead` of a fixed-length or raw stream).
    func readBytes(_ count: Int) throws -> [UInt8] { try readExactly(count) }
}
