import CShims
import Dispatch
import Foundation
import KeywardSupport
import XCTest
@testable import Upstream

/// A kept upstream connection whose server spoke unasked after its last answer must never carry
/// the next request, even when those bytes arrive while the loop is busy, in the very turn that
/// hands the connection to a new transfer (the loop's own readiness check runs only at the next
/// `epoll_wait`). Otherwise one client reads the answer another request caused.
final class KeptConnectionVettingTests: XCTestCase {
    func testBytesThatArriveInTheTurnAConnectionIsReusedNeverBecomeTheNextAnswer() throws {
        let sendUnasked = DispatchSemaphore(value: 0)
        let unaskedSent = DispatchSemaphore(value: 0)
        let server = try TestUpstreamServer { request, conn in
            _ = conn.respond(status: 200, body: Array(request.target.utf8))
            guard request.target == "/first" else { return }
            // A second answer nobody asked for, sent when the test says (a server that answered
            // early and then read the request's body as a request of its own).
            guard sendUnasked.wait(timeout: .now() + 10) == .success else { return }
            _ = conn.write("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nSMUGGLED")
            unaskedSent.signal()
        }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        // An attached source the test fires: its run, on the loop thread, lets the unasked bytes
        // arrive and then starts the next transfer, all in one turn, as a server loop does when a
        // request comes in while a provider's late bytes are on the wire.
        let trigger = kw_eventfd()
        XCTAssertGreaterThanOrEqual(trigger, 0)
        defer { close(trigger) }
        let second = RecordingHandler()
        let fired = Locked(false)
        let port = server.port
        client.attach(AttachedEventSource(descriptor: trigger, run: { _ in
            kw_eventfd_drain(trigger)
            guard !fired.withLock({ let was = $0; $0 = true; return was }) else { return }
            sendUnasked.signal()
            guard unaskedSent.wait(timeout: .now() + 10) == .success else { return }
            client.start(UpstreamRequest(url: "http://127.0.0.1:\(port)/second"), handler: second)
        }, millisecondsUntilRun: { nil }))

        let first = RecordingHandler()
        client.start(UpstreamRequest(url: "http://127.0.0.1:\(port)/first"), handler: first)
        XCTAssertTrue(first.waitForCompletion())
        XCTAssertEqual(first.snapshot.body, Array("/first".utf8))

        kw_eventfd_signal(trigger)
        XCTAssertTrue(second.waitForCompletion())
        XCTAssertNil(second.snapshot.error)
        XCTAssertEqual(second.snapshot.status, 200)
        XCTAssertEqual(String(decoding: second.snapshot.body, as: UTF8.self), "/second", "the unasked answer was read as this request's")
        // The connection that spoke was dropped; the request went out on a new one.
        XCTAssertEqual(server.requests.map(\.target), ["/first", "/second"])
        XCTAssertEqual(server.requests.map(\.connectionID), [1, 2])
    }

    func testTheConnectionOfAHEADAnswerIsNotReusedSoABodySentWithItReachesNoOne() throws {
        let server = try TestUpstreamServer { request, conn in
            if request.method == "HEAD" {
                // Wrong, and common: the body of the GET sent after the head of a HEAD answer.
                _ = conn.write("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nSMUGGLED")
            } else {
                _ = conn.respond(status: 200, body: Array(request.target.utf8))
            }
        }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }
        for round in 0..<3 {
            let head = RecordingHandler()
            client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/h\(round)", method: "HEAD"), handler: head)
            XCTAssertTrue(head.waitForCompletion())
            XCTAssertNil(head.snapshot.error)
            XCTAssertEqual(head.snapshot.status, 200)
            XCTAssertEqual(head.snapshot.body, [])
            let get = RecordingHandler()
            client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/g\(round)"), handler: get)
            XCTAssertTrue(get.waitForCompletion())
            XCTAssertNil(get.snapshot.error, "round \(round)")
            XCTAssertEqual(String(decoding: get.snapshot.body, as: UTF8.self), "/g\(round)", "round \(round)")
        }
        // A HEAD's connection closed after its answer: no later request went out on it.
        let requests = server.requests
        XCTAssertEqual(requests.count, 6)
        for (index, request) in requests.enumerated() where request.method == "HEAD" {
            XCTAssertFalse(requests[(index + 1)...].contains { $0.connectionID == request.connectionID },
                           "a request went out on a HEAD's connection: \(requests.map { "\($0.method) \($0.connectionID)" })")
        }
    }
}
