import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 connection to a loopback port, for tests that must control exactly when
/// bytes are read (a slow reader) or send bytes an HTTP library would refuse to write.
final class RawConnection {
    enum Failure: Error { case connect, closed, timeout, malformed(String) }

    /// A response head and as much of its body as was read.
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        /// Body bytes read (kept in `body` unless the read was `countOnly`).
        var bodyCount = 0

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    private let fd: Int32
    private var buffer: [UInt8] = []

    init(port: UInt16, receiveTimeout: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure.connect }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw Failure.connect
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress.map { $0 + sent }, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Failure.closed }
            sent += count
        }
    }

    /// Reads more bytes into the buffer; false at end of stream (or a reset).
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
        if count == 0 || errno == ECONNRESET { return false }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw Failure.timeout }
        throw Failure.closed
    }

    /// Reads one response. A body framed by `Content-Length` is read up to that length or to the
    /// end of the stream, whichever comes first (a cut body comes back short, it does not throw);
    /// a chunked body is not supported (these tests' upstreams do not send one).
    /// - Parameter countOnly: keep only the count of body bytes (`bodyCount`; `body` stays empty).
    func readResponse(countOnly: Bool = false) throws -> Response {
        var headEnd: Range<Int>?
        while headEnd == nil {
            headEnd = buffer.firstRange(of: Array("\r\n\r\n".utf8))
            if headEnd == nil, try !fill() { throw Failure.closed }
        }
        guard let headEnd else { throw Failure.closed }
        let lines = String(decoding: buffer[..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        buffer.removeSubrange(..<headEnd.upperBound)
        let statusParts = (lines.first ?? "").split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure.malformed(lines.first ?? "") }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw Failure.malformed(line) }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = Response(status: status, headers: headers, body: [])
        let length = response.header("content-length").flatMap { Int($0) } ?? 0
        var received = 0
        var kept: [UInt8] = []
        while received < length {
            if buffer.isEmpty, try !fill() { break }
            let take = min(buffer.count, length - received)
            if !countOnly { kept.append(contentsOf: buffer[..<take]) }
            buffer.removeSubrange(..<take)
            received += take
        }
        response.body = kept
        response.bodyCount = received
        return response
    }

    /// Sends `request` and reads its response.
    func exchange(_ request: String) throws -> Response {
        try send(request)
        return try readResponse()
    }

    /// True when the other side closes (end of stream or reset) before sending any more bytes.
    func isClosedByPeer() -> Bool {
        do {
            while try fill() {}
            return buffer.isEmpty
        } catch {
            return false
        }
    }

    /// Every byte the other side sends until it closes (or the receive timeout passes).
    func readToEnd() -> [UInt8] {
        while (try? fill()) == true {}
        defer { buffer = [] }
        return buffer
    }
}
