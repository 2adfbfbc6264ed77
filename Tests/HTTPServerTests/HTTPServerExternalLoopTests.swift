import Foundation
import HTTPServer
import TestWaiting
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Servers without threads of their own, run by a loop the test owns (the contract in
/// `HTTPServer+ExternalLoop.swift`). Keyward's real loop is the upstream client's; the proxy's
/// end-to-end tests run through it.
final class HTTPServerExternalLoopTests: XCTestCase {
    func testAnswerGivenLaterOnAnotherThreadWakesTheLoop() throws {
        let loop = TestLoop(for: self)
        let server = try loop.startServer { _, _, writer in
            onAnotherThread {
                Thread.sleep(forTimeInterval: 0.1)  // a late answer from another thread: the behaviour under test
                writer.respond(status: 200, headers: [], body: Array("late".utf8))
            }
        }
        let client = try RawClient(port: server.port)
        let started = Date()
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body, Array("late".utf8))
        // The loop sleeps up to 10 s when nothing wakes it.
        XCTAssertLessThan(Date().timeIntervalSince(started), 1.0)
        XCTAssertGreaterThan(loop.wakes.value, 0)
    }

    func testAnswerGivenInsideTheHandlerGoesOutOnTheSameTurn() throws {
        let loop = TestLoop(for: self)
        let server = try loop.startServer { head, _, writer in
            writer.respond(status: 201, headers: [("X-Path", head.path)], body: [])
        }
        let client = try RawClient(port: server.port)
        for index in 0..<20 {
            try client.send("GET /\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 201)
            XCTAssertEqual(response.header("X-Path"), "/\(index)")
        }
    }

    func testSiblingsShareOnePortAndTheKernelSpreadsConnections() throws {
        let served = Box([0, 0])
        let first = TestLoop(for: self)
        let second = TestLoop(for: self)
        let one = try first.startServer { _, _, writer in
            served.mutate { $0[0] += 1 }
            writer.respond(status: 200, headers: [], body: [])
        }
        let two = try second.startServer(sharingPortWith: one) { _, _, writer in
            served.mutate { $0[1] += 1 }
            writer.respond(status: 200, headers: [], body: [])
        }
        XCTAssertEqual(two.port, one.port)
        // 32 connections all hashed to one listener would happen once in 2^31 runs.
        for _ in 0..<32 {
            let client = try RawClient(port: one.port)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            XCTAssertEqual(try client.readResponse().status, 200)
        }
        XCTAssertEqual(served.value[0] + served.value[1], 32)
        XCTAssertGreaterThan(served.value[0], 0)
        XCTAssertGreaterThan(served.value[1], 0)
    }

    func testAFixedPortSomeoneListensOnIsRefusedDespiteSOReusePort() throws {
        let pooled = try startServer { _, _, writer in writer.respond(status: 200, headers: [], body: []) }
        let loop = TestLoop(for: self)
        XCTAssertThrowsError(try loop.startServer(port: pooled.port) { _, _, _ in }) { error in
            XCTAssertEqual("\(error)", "\(HTTPServerError.startFailed(host: "127.0.0.1", port: pooled.port))")
        }
        // A pooled server cannot join an external-loop one either.
        let external = try TestLoop(for: self).startServer { _, _, _ in }
        let late = HTTPServer(configuration: HTTPServerConfiguration(port: external.port), bodyLimit: { _ in 0 }) { _, _, _ in }
        XCTAssertThrowsError(try late.start())
        XCTAssertThrowsError(try late.start(sharingPortWith: external))
    }

    /// A run the loop makes for an answer alone (its wait did not report the descriptor readable)
    /// writes the answers given but does not read the server's set, so it costs no `epoll_wait`;
    /// what arrived meanwhile keeps the descriptor readable and is served by the next run that
    /// says so.
    func testARunForAnswersAloneWritesThemAndLeavesNewArrivalsToTheNextReadyRun() throws {
        let kept = Box<[ResponseWriter]>([])
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(port: 0), bodyLimit: { _ in 0 },
            externalLoop: HTTPServer.ExternalLoop(wake: {}),
            handler: { _, _, writer in kept.mutate { $0.append(writer) } })
        try server.start()
        defer { server.stop() }
        let first = try RawClient(port: server.port)
        try first.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(waitUntil(timeout: 5) {
            server.runOnce(descriptorReady: true)
            return kept.value.count == 1
        })

        let second = try RawClient(port: server.port)
        try second.send("GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
        var ready = [pollfd(fd: server.eventDescriptor, events: Int16(POLLIN), revents: 0)]
        XCTAssertEqual(poll(&ready, 1, 5000), 1, "the second connection never made the set readable")

        kept.value[0].respond(status: 200, headers: [], body: Array("one".utf8))
        XCTAssertEqual(server.millisecondsUntilRun, 0)
        server.runOnce(descriptorReady: false)
        let answer = try first.readResponse()
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.body, Array("one".utf8))
        XCTAssertEqual(kept.value.count, 1, "a run for answers alone read the set")
        ready[0].revents = 0
        XCTAssertEqual(poll(&ready, 1, 0), 1, "the new arrival no longer shows at the next wait")

        XCTAssertTrue(waitUntil(timeout: 5) {
            server.runOnce(descriptorReady: true)
            return kept.value.count == 2
        })
        kept.value[1].respond(status: 204, headers: [], body: [])
        server.runOnce(descriptorReady: false)
        XCTAssertEqual(try second.readResponse().status, 204)
    }

    func testStoppingWhileTheLoopStillRunsItCutsOpenRequestsAndLaterRunsDoNothing() throws {
        let loop = TestLoop(for: self)
        let kept = Box<[ResponseWriter]>([])
        let server = try loop.startServer { _, _, writer in kept.mutate { $0.append(writer) } }  // never answers
        let client = try RawClient(port: server.port, receiveTimeout: 2)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(waitUntil(timeout: 2) { server.activeRequests > 0 })
        XCTAssertEqual(server.activeRequests, 1)
        server.stop()
        XCTAssertNil(try? client.readHead(), "the connection outlived stop()")
        XCTAssertEqual(server.eventDescriptor, -1)
        XCTAssertNil(server.millisecondsUntilRun)
        server.runOnce()  // what a loop that has not noticed yet does: nothing
    }
}

/// A minimal external loop: one thread, poll(2) over the server's descriptor and a wake pipe,
/// sleeping up to 10 s when the server sets no nearer deadline, telling each run whether the
/// descriptor was readable.
private final class TestLoop: @unchecked Sendable {
    let wakes = Box(0)
    private let wakePipe: [Int32]
    private let stopped = Box(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Its servers and thread stop at this test's teardown.
    private unowned let test: XCTestCase

    init(for test: XCTestCase) {
        self.test = test
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0)
        for fd in fds { _ = fcntl(fd, F_SETFL, O_NONBLOCK) }
        wakePipe = fds
    }

    func startServer(
        port: UInt16 = 0, sharingPortWith sibling: HTTPServer? = nil, handler: @escaping HTTPServer.Handler
    ) throws -> HTTPServer {
        let writeEnd = wakePipe[1]
        let wakes = self.wakes
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(port: port), bodyLimit: { _ in 1024 },
            externalLoop: HTTPServer.ExternalLoop(wake: {
                wakes.mutate { $0 += 1 }
                var byte: UInt8 = 1
                _ = write(writeEnd, &byte, 1)
            }),
            handler: handler)
        if let sibling { try server.start(sharingPortWith: sibling) } else { try server.start() }
        let descriptor = server.eventDescriptor
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        Thread.detachNewThread { [self] in run(server, descriptor) }
        test.addTeardownBlock { [self] in
            stopped.value = true
            var byte: UInt8 = 1
            _ = write(wakePipe[1], &byte, 1)
            finished.wait()
            server.stop()
            close(wakePipe[0])
            close(wakePipe[1])
        }
        return server
    }

    private func run(_ server: HTTPServer, _ descriptor: Int32) {
        var drain = [UInt8](repeating: 0, count: 64)
        while !stopped.value {
            let timeout = Int32(min(server.millisecondsUntilRun ?? 10_000, 10_000))
            var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wakePipe[0], events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 2, timeout)
            while read(wakePipe[0], &drain, drain.count) > 0 {}
            server.runOnce(descriptorReady: fds[0].revents & Int16(POLLIN) != 0)
        }
        finished.signal()
    }
}
