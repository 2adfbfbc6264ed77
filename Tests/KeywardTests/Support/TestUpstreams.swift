import Foundation
import HTTPServer
import Synchronization

/// An upstream that answers every request with a redirect to `location`.
final class RedirectingProvider: Sendable {
    let server: HTTPServer

    init(location: String) {
        server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 1),
            bodyLimit: { _ in 1024 },
            handler: { _, _, writer in
                writer.respond(status: 302, headers: [("Location", location), ("Content-Type", "text/plain")], body: Array("moved".utf8))
            })
    }

    func start() throws { try server.start() }
    func stop() { server.stop() }
    var port: UInt16 { server.port }
}

/// An upstream that streams `totalBytes` of filler as fast as the reader takes it, honouring
/// back-pressure, and records when its client (the proxy) goes away.
final class FirehoseProvider: Sendable {
    struct State {
        var sent = 0
        var closedAt: DispatchTime?
        var finished = false
    }

    /// The pump's progress, shared with the server's handler.
    final class Shared: Sendable {
        let state = Mutex(State())
    }

    let server: HTTPServer
    let shared = Shared()
    let totalBytes: Int

    init(totalBytes: Int, chunkBytes: Int = 64 * 1024) {
        self.totalBytes = totalBytes
        let state = shared
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: chunkBytes)
        server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2),
            bodyLimit: { _ in 1024 },
            handler: { _, _, writer in
                let stream = writer.startStream(status: 200, headers: [("Content-Type", "application/octet-stream")])
                let pump: @Sendable () -> Void = {
                    while true {
                        let (sent, done) = state.state.withLock { ($0.sent, $0.closedAt != nil || $0.finished) }
                        if done { return }
                        if sent >= totalBytes {
                            state.state.withLock { $0.finished = true }
                            stream.finish()
                            return
                        }
                        let piece = min(chunk.count, totalBytes - sent)
                        state.state.withLock { $0.sent += piece }
                        if !stream.write(Array(chunk[0..<piece])) { return }  // resumed by onWritable
                    }
                }
                stream.onWritable = { DispatchQueue.global().async(execute: pump) }
                stream.onClose = { state.state.withLock { $0.closedAt = DispatchTime.now() } }
                DispatchQueue.global().async(execute: pump)
            })
    }

    func start() throws { try server.start() }
    func stop() { server.stop() }
    var port: UInt16 { server.port }
}

/// Resident set size of this process, bytes (Linux /proc/self/statm).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// An upstream that answers every request with the same raw bytes, whatever they are: for the
/// malformed answers an HTTP library would refuse to write. One thread per connection; each
/// request head (up to its blank line) gets `answer`, and the connection stays open. With `late`,
/// a connection's first answer is followed `lateDelay` seconds later by those bytes, unasked.
/// With `closeIdleAfter`, a connection is closed that many seconds after its first answer, as a
/// provider closes idle keep-alive connections.
final class RawUpstream: @unchecked Sendable {
    private let listener: Int32
    private let answer: [UInt8]
    private let late: [UInt8]?
    private let lateDelay: TimeInterval
    private let closeIdleAfter: TimeInterval?
    private let closeAfterAnswer: Bool
    private let lateSentFlag = Atomic<Bool>(false)
    private let closedCount = Atomic<Int>(0)
    private let acceptedCount = Atomic<Int>(0)
    private let requestCounter = Atomic<Int>(0)
    let port: UInt16

    /// True once the unasked bytes were sent (what a test waits for before its next call).
    var lateSent: Bool { lateSentFlag.load(ordering: .acquiring) }
    /// Connections closed by this upstream after their first answer (`closeIdleAfter`).
    var closedConnections: Int { closedCount.load(ordering: .acquiring) }
    /// Connections accepted so far.
    var acceptedConnections: Int { acceptedCount.load(ordering: .acquiring) }
    /// Requests answered so far (each head counted as its answer is sent).
    var requestCount: Int { requestCounter.load(ordering: .acquiring) }

    /// - Parameter closeAfterAnswer: close the connection right after sending `answer` (a provider
    ///   that fails mid-body when `answer` is shorter than its head says).
    init(
        answer: String, late: String? = nil, lateDelay: TimeInterval = 0.3, closeIdleAfter: TimeInterval? = nil,
        closeAfterAnswer: Bool = false
    ) throws {
        self.answer = Array(answer.utf8)
        self.closeAfterAnswer = closeAfterAnswer
        self.late = late.map { Array($0.utf8) }
        self.lateDelay = lateDelay
        self.closeIdleAfter = closeIdleAfter
        (listener, port) = try loopbackListener(backlog: 16)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            acceptedCount.add(1, ordering: .releasing)
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        var closed = false
        defer { if !closed { close(connection) } }
        var pending: [UInt8] = []
        var sentLate = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            pending += buffer[0..<count]
            while let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                pending.removeSubrange(0..<end.upperBound)
                requestCounter.add(1, ordering: .releasing)
                _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if closeAfterAnswer { return }
                if let late, !sentLate {
                    sentLate = true
                    Thread.sleep(forTimeInterval: lateDelay)  // bytes sent unasked, later: the behaviour under test
                    _ = late.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    lateSentFlag.store(true, ordering: .releasing)
                }
                if let closeIdleAfter {
                    Thread.sleep(forTimeInterval: closeIdleAfter)  // the idle time the provider allows: the behaviour under test
                    closed = true
                    close(connection)
                    closedCount.add(1, ordering: .releasing)
                    return
                }
            }
        }
    }
}

/// A keep-alive upstream on 127.0.0.1 that answers `GET /small` with `{}` and `GET /big?mb=N` with
/// N MiB of filler, both with a `Content-Length`; anything else gets a 404. One thread per
/// connection, blocking sends (the proxy's back-pressure holds the sender), one shared filler buffer.
final class SizedUpstream: @unchecked Sendable {
    private let listener: Int32
    private let filler = [UInt8](repeating: UInt8(ascii: "b"), count: 1 << 20)
    let port: UInt16

    init() throws {
        (listener, port) = try loopbackListener(backlog: 128)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            pending += buffer[0..<count]
            while let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                let requestLine = String(decoding: pending[..<(pending.firstIndex(of: 0x0D) ?? end.lowerBound)], as: UTF8.self)
                pending.removeSubrange(0..<end.upperBound)
                guard answer(requestLine, on: connection) else { return }
            }
        }
    }

    /// Sends the answer to one request line; false when the connection broke.
    private func answer(_ requestLine: String, on connection: Int32) -> Bool {
        let target = requestLine.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        if target.hasPrefix("/big?mb="), let mebibytes = Int(target.dropFirst("/big?mb=".count)) {
            guard send(Array("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(mebibytes << 20)\r\n\r\n".utf8), on: connection)
            else { return false }
            for _ in 0..<mebibytes where !send(filler, on: connection) { return false }
            return true
        }
        if target == "/small" {
            return send(Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".utf8), on: connection)
        }
        return send(Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".utf8), on: connection)
    }

    private func send(_ bytes: [UInt8], on connection: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress.map { $0 + sent }, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}

/// A TCP socket listening on 127.0.0.1 at a port the kernel picks, and that port.
/// - Throws: `POSIXError(.EADDRINUSE)` when it cannot bind or listen.
func loopbackListener(backlog: Int32) throws -> (descriptor: Int32, port: UInt16) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
    guard bound == 0, listen(listener, backlog) == 0 else {
        close(listener)
        throw POSIXError(.EADDRINUSE)
    }
    var actual = sockaddr_in()
    var actualLength = length
    _ = withUnsafeMutablePointer(to: &actual) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &actualLength) }
    }
    return (listener, UInt16(bigEndian: actual.sin_port))
}
