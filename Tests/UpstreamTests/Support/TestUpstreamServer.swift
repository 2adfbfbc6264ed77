import CShims
import Foundation
import KeywardSupport  // Locked: a pthread mutex ThreadSanitizer can see
import Synchronization
@testable import Upstream
#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP/1.1 origin on 127.0.0.1 for the Upstream tests, over raw sockets (one thread per
/// connection). It records every request exactly as it arrived — method, raw target, header lines in
/// order, body — and hands each to the test's handler with the connection, so a test can answer
/// byte by byte, pause between chunks, stay silent, or watch the socket close.
/// Request bodies are read by `Content-Length` only (the client under test always sends one).
final class TestUpstreamServer: @unchecked Sendable {
    struct Request: Sendable {
        var method: String
        var target: String
        var headers: [(String, String)]
        var body: [UInt8]
        /// 1-based number of the TCP connection it came on.
        var connectionID: Int
    }

    typealias Handler = @Sendable (Request, TestConnection) -> Void

    let port: UInt16
    private let listener: Int32
    private let handler: Handler
    private let state = Locked<(requests: [Request], connections: [TestConnection])>(([], []))

    /// Binds 127.0.0.1 on an ephemeral port and starts accepting.
    init(handler: @escaping Handler) throws {
        self.handler = handler
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestServerError.socket }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 512) == 0 else { Glibc.close(fd); throw TestServerError.socket }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.listener = fd
        self.port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Every request received so far, in arrival order.
    var requests: [Request] { state.withLock { $0.requests } }
    /// How many TCP connections were accepted.
    var connectionCount: Int { state.withLock { $0.connections.count } }

    /// Stops accepting and closes every connection. The listener is only shut down here (which
    /// wakes `accept`); the accept thread frees it, so its descriptor number cannot be reused by the
    /// next test's listener while this thread still accepts on it.
    func stop() {
        stopped.store(true, ordering: .releasing)
        shutdown(listener, Int32(SHUT_RDWR))
        for connection in state.withLock({ $0.connections }) { connection.close() }
    }

    private let stopped = Atomic<Bool>(false)

    private func acceptLoop() {
        defer { Glibc.close(listener) }
        while true {
            let fd = accept(listener, nil, nil)
            if stopped.load(ordering: .acquiring) {
                if fd >= 0 { Glibc.close(fd) }
                return
            }
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let connection = state.withLock { state -> TestConnection in
                let connection = TestConnection(fd: fd, id: state.connections.count + 1)
                state.connections.append(connection)
                return connection
            }
            let thread = Thread { [self] in serve(connection) }
            thread.stackSize = 256 * 1024
            thread.start()
        }
    }

    private func serve(_ connection: TestConnection) {
        while !connection.isClosed, let request = connection.readRequest() {
            state.withLock { $0.requests.append(request) }
            handler(request, connection)
        }
        connection.close()
        connection.release()
    }
}

enum TestServerError: Error { case socket }

/// One accepted connection: reading requests, writing raw bytes, watching for the peer's close.
final class TestConnection: @unchecked Sendable {
    let fd: Int32
    let id: Int
    private var buffer: [UInt8] = []  // serve thread only
    private let closed = Atomic<Bool>(false)
    private let written = Atomic<Int>(0)

    init(fd: Int32, id: Int) {
        self.fd = fd
        self.id = id
    }

    var isClosed: Bool { closed.load(ordering: .acquiring) }
    /// Bytes accepted by the kernel so far (send returned).
    var bytesWritten: Int { written.load(ordering: .acquiring) }

    /// Reads one request; nil at EOF or on a malformed head.
    func readRequest() -> TestUpstreamServer.Request? {
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffer.firstRange(of: terminator)?.upperBound
            if headEnd == nil && !fill() { return nil }
        }
        guard let headEnd else { return nil }
        let head = String(decoding: buffer[..<(headEnd - 4)], as: UTF8.self)
        buffer.removeFirst(headEnd)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3 else { return nil }
        let headers = lines.map { line -> (String, String) in
            guard let colon = line.firstIndex(of: ":") else { return (line, "") }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
        while buffer.count < length {
            if !fill() { return nil }
        }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return .init(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers, body: body, connectionID: id)
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }

    /// Writes all of `bytes` (blocking); false once the peer is gone.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
            written.add(sent, ordering: .releasing)
        }
        return true
    }

    @discardableResult
    func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    /// A complete response with `Content-Length`.
    @discardableResult
    func respond(status: Int, reason: String = "OK", headers: [(String, String)] = [], body: [UInt8] = []) -> Bool {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        return write(Array(head.utf8) + body)
    }

    /// One chunk of a chunked body (RFC 9112 §7.1).
    @discardableResult
    func writeChunk(_ bytes: [UInt8]) -> Bool {
        write(Array(String(bytes.count, radix: 16).utf8) + Array("\r\n".utf8) + bytes + Array("\r\n".utf8))
    }

    /// Waits until the peer closes its side (recv returns 0 or fails); true if it did within `timeout` seconds.
    /// Any bytes the peer sends meanwhile are discarded.
    func waitForPeerClose(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var scratch = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let remainingMs = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard poll(&poller, 1, remainingMs) > 0 else { continue }
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return true }
        }
        return false
    }

    /// Shuts the socket down both ways (the peer sees EOF); the serving thread frees the descriptor.
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Frees the descriptor; called once, by the serving thread, when it is done with the connection.
    func release() { Glibc.close(fd) }
}
