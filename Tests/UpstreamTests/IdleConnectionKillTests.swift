import CShims
import Foundation
import XCTest

/// `kw_socket_kill_idle`: what the loop does to an idle cached upstream connection that spoke or
/// closed. libcurl 7.88 judges a cached connection before reusing it by `poll`, then a one-byte
/// `MSG_PEEK`: only end of file (0) makes it dead. A killed descriptor must read so at once, or
/// libcurl sends the next request into it and that client gets a 502.
final class IdleConnectionKillTests: XCTestCase {
    /// A connected loopback TCP pair: (Keyward's side, the provider's side).
    private func connectedPair() throws -> (Int32, Int32) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                guard bind(listener, raw, length) == 0, listen(listener, 1) == 0, getsockname(listener, raw, &length) == 0 else {
                    throw POSIXError(.EADDRNOTAVAIL)
                }
            }
        }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
        }
        XCTAssertEqual(connected, 0)
        let server = accept(listener, nil, nil)
        close(listener)
        XCTAssertGreaterThanOrEqual(server, 0)
        return (client, server)
    }

    func testAKilledConnectionReadsEndOfFileForLibcurlsLivenessCheck() throws {
        let (client, server) = try connectedPair()
        defer { close(client); close(server) }
        // The provider closed the idle connection: the loop saw it readable and kills it.
        XCTAssertEqual(shutdown(server, Int32(SHUT_WR)), 0)
        XCTAssertEqual(kw_socket_kill_idle(client), 0)
        // libcurl's check: readable at once ...
        var probe = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&probe, 1, 0), 1)
        XCTAssertNotEqual(probe.revents & Int16(POLLIN | POLLHUP), 0)
        // ... and a peek of end of file, which is what makes libcurl 7.88 drop the connection.
        var byte: UInt8 = 0
        XCTAssertEqual(recv(client, &byte, 1, Int32(MSG_PEEK)), 0)
        // The descriptor number stays open (libcurl still owns and later closes it), close-on-exec.
        XCTAssertEqual(fcntl(client, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC)
    }

    func testBytesSentUnaskedAreGoneAndTheProviderSeesTheConnectionClosed() throws {
        let (client, server) = try connectedPair()
        defer { close(client); close(server) }
        let unasked = Array("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nSMUGGLED".utf8)
        XCTAssertEqual(send(server, unasked, unasked.count, Int32(MSG_NOSIGNAL)), unasked.count)
        XCTAssertEqual(kw_socket_kill_idle(client), 0)
        var byte: UInt8 = 0
        XCTAssertEqual(recv(client, &byte, 1, Int32(MSG_PEEK)), 0, "the unasked bytes must not be readable as an answer")
        // The TCP connection itself is closed: the provider's next read ends (reset or end of file).
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(server, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 16)
        XCTAssertLessThanOrEqual(recv(server, &buffer, buffer.count, 0), 0)
    }
}
