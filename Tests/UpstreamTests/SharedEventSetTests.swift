import CShims
import Foundation
import HTTPServer
import KeywardSupport
import XCTest
@testable import Upstream

/// A server attached to an upstream client's loop the way a Keyward shard attaches it: its
/// listener and connections registered in the loop's own epoll set with tagged tokens, so that
/// one `epoll_wait` per turn serves the server and its transfers, and the server never waits on a
/// set of its own while it serves.
final class SharedEventSetTests: XCTestCase {
    func testAProxiedKeepAliveConnectionIsServedFromTheLoopsOneWait() throws {
        let origin = try TestUpstreamServer { request, connection in
            _ = connection.respond(status: 200, body: Array("origin saw \(request.target)".utf8))
        }
        defer { origin.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }
        let originPort = origin.port
        let tag = AttachedEventSource.tokenTag
        let front = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
            bodyLimit: { _ in 0 },
            externalLoop: HTTPServer.ExternalLoop(
                wake: { client.wakeAttachedSource() },
                sharedEventSet: HTTPServer.ExternalLoop.SharedEventSet(descriptor: client.sharedEventSet(), tokenTag: tag)),
            handler: { head, _, writer in
                client.start(UpstreamRequest(url: "http://127.0.0.1:\(originPort)\(head.path)"), handler: Relay(writer))
            })
        try front.start()
        defer { front.stop() }
        client.attach(AttachedEventSource(
            run: { ready in front.runOnce(ready: ready.tokens, events: ready.events) },
            millisecondsUntilRun: { front.millisecondsUntilRun }))
        XCTAssertEqual(front.eventDescriptor, -1, "a shared-set server has no set of its own to watch")

        let connection = try KeepAliveClient(port: front.port)
        for index in 0..<50 {
            let answer = try connection.get("/item/\(index)")
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(answer.body, "origin saw /item/\(index)")
        }
        // Fifty requests read, forwarded and answered without one wait on a server set.
        XCTAssertEqual(front.ownWaits, 0)
        XCTAssertEqual(origin.requests.count, 50)

        // The loop's set holds the server's listener (token 0) and its one connection (token 1),
        // tagged, next to libcurl's untagged sockets and the loop's wakeup.
        let set = client.sharedEventSet()
        XCTAssertGreaterThanOrEqual(set, 0)
        defer { close(set) }
        let registrations = try Self.registrations(ofEpollSet: set)
        let tagged = registrations.filter { $0 & tag != 0 }.sorted()
        XCTAssertEqual(tagged, [tag | 0, tag | 1])
        XCTAssertFalse(registrations.filter { $0 & tag == 0 }.isEmpty, "the loop's own entries are there too")
    }

    func testAServerSetUpAfterTheClientShutDownFailsToStart() throws {
        let client = UpstreamClient()
        client.shutdown()
        let set = client.sharedEventSet()
        XCTAssertEqual(set, -1)
        let front = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
            bodyLimit: { _ in 0 },
            externalLoop: HTTPServer.ExternalLoop(
                wake: {}, sharedEventSet: HTTPServer.ExternalLoop.SharedEventSet(descriptor: set, tokenTag: AttachedEventSource.tokenTag)),
            handler: { _, _, writer in writer.respond(status: 200) })
        XCTAssertThrowsError(try front.start())
    }

    /// The 64-bit data of every registration in the epoll set `descriptor`, from the kernel's
    /// `/proc/self/fdinfo` lines (`tfd: N events: X data: HEX ...`).
    static func registrations(ofEpollSet descriptor: Int32) throws -> [UInt64] {
        let text = try String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8)
        return text.split(separator: "\n").filter { $0.hasPrefix("tfd:") }.compactMap { line in
            let words = line.split(separator: " ")
            guard let at = words.firstIndex(of: "data:"), at + 1 < words.count else { return nil }
            return UInt64(words[at + 1], radix: 16)
        }
    }
}

/// Answers a front request with what the origin answered, once the transfer completes.
private final class Relay: UpstreamResponseHandler, @unchecked Sendable {
    private let writer: ResponseWriter
    private var status = 0
    private var body: [UInt8] = []

    init(_ writer: ResponseWriter) { self.writer = writer }

    func upstreamHead(status: Int, headers: [(String, String)]) { self.status = status }

    func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
        body.append(contentsOf: chunk)
        return true
    }

    func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) {
        writer.respond(status: error == nil ? status : 502, body: body)
    }
}

/// One keep-alive client connection with blocking reads under a receive timeout.
private final class KeepAliveClient {
    struct Answer {
        let status: Int
        let body: String
    }

    private let fd: Int32
    private var buffered: [UInt8] = []

    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit { close(fd) }

    /// Sends `GET path` and reads its answer (head, then a `Content-Length` body).
    func get(_ path: String) throws -> Answer {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        guard send(fd, request, request.count, 0) == request.count else { throw POSIXError(.EIO) }
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while true {
            if headEnd == nil, buffered.count >= 4 {
                headEnd = (0...(buffered.count - 4)).first { Array(buffered[$0..<($0 + 4)]) == separator }.map { $0 + 4 }
            }
            if let end = headEnd {
                let head = String(decoding: buffered[..<end], as: UTF8.self)
                let lines = head.split(separator: "\r\n")
                let status = lines.first.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
                let length = lines.dropFirst().compactMap { line -> Int? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                    return Int(parts[1].trimmingCharacters(in: .whitespaces))
                }.first ?? 0
                if buffered.count >= end + length {
                    let body = String(decoding: buffered[end..<(end + length)], as: UTF8.self)
                    buffered.removeFirst(end + length)
                    return Answer(status: status, body: body)
                }
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let got = recv(fd, &chunk, chunk.count, 0)
            guard got > 0 else { throw POSIXError(.ETIMEDOUT) }  // the receive timeout is the deadline
            buffered.append(contentsOf: chunk[..<got])
        }
    }
}
