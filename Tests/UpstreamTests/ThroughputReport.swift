import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Upstream

/// Not a timed test: prints requests/s through the client, only when asked.
///
///     KEYWARD_UPSTREAM_THROUGHPUT=1 swift test --filter UpstreamTests.ThroughputReport            # the test origin
///     KEYWARD_UPSTREAM_THROUGHPUT=http://127.0.0.1:8080/ swift test --filter UpstreamTests.ThroughputReport
///
/// Optional: KEYWARD_UPSTREAM_REQUESTS (20000), KEYWARD_UPSTREAM_CONCURRENCY (32), KEYWARD_UPSTREAM_THREADS (1),
/// KEYWARD_UPSTREAM_IDLE_STREAMS (0: how many silent open streams to hold on the same client meanwhile,
/// to see what long-lived SSE transfers cost the others).
///
/// The built-in origin is a thread-per-connection test server, so with it the figure is a floor.
final class ThroughputReport: XCTestCase {
    func testReportRequestsPerSecond() throws {
        guard let setting = ProcessInfo.processInfo.environment["KEYWARD_UPSTREAM_THROUGHPUT"] else {
            throw XCTSkip("set KEYWARD_UPSTREAM_THROUGHPUT to measure")
        }
        var server: TestUpstreamServer?
        let url: String
        if setting.hasPrefix("http") {
            url = setting
        } else {
            let origin = try TestUpstreamServer { _, conn in conn.respond(status: 200, body: Array("ok".utf8)) }
            server = origin
            url = "http://127.0.0.1:\(origin.port)/"
        }
        defer { server?.stop() }
        let total = Int(ProcessInfo.processInfo.environment["KEYWARD_UPSTREAM_REQUESTS"] ?? "") ?? 20_000
        let inFlight = Int(ProcessInfo.processInfo.environment["KEYWARD_UPSTREAM_CONCURRENCY"] ?? "") ?? 32
        let threads = Int(ProcessInfo.processInfo.environment["KEYWARD_UPSTREAM_THREADS"] ?? "") ?? 1
        let idleCount = Int(ProcessInfo.processInfo.environment["KEYWARD_UPSTREAM_IDLE_STREAMS"] ?? "") ?? 0
        // The idle streams all go to one origin: the per-host limit must let every one of them connect.
        let client = UpstreamClient(configuration: .init(maxConnectionsPerHost: max(inFlight, idleCount), threads: threads))
        defer { client.shutdown() }

        /// Starts the next request from each completion, keeping `inFlight` transfers running.
        final class Driver: UpstreamResponseHandler, @unchecked Sendable {
            let client: UpstreamClient
            let url: String
            let remaining: Atomic<Int>
            let finished = Atomic<Int>(0)
            let failures = Atomic<Int>(0)
            let total: Int
            let done = DispatchSemaphore(value: 0)
            init(client: UpstreamClient, url: String, total: Int) {
                self.client = client
                self.url = url
                self.total = total
                self.remaining = Atomic(total)
            }
            func launch() {
                guard remaining.subtract(1, ordering: .relaxed).newValue >= 0 else { return }
                client.start(UpstreamRequest(url: url), handler: self)
            }
            func upstreamHead(status: Int, headers: [(String, String)]) {}
            func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool { true }
            func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) {
                if error != nil { failures.add(1, ordering: .relaxed) }
                if finished.add(1, ordering: .relaxed).newValue == total { done.signal() } else { launch() }
            }
        }
        let idleOrigin = try TestUpstreamServer { _, conn in
            conn.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            _ = conn.waitForPeerClose(timeout: 600)
        }
        defer { idleOrigin.stop() }
        let idleStreams = (0..<idleCount).map { _ in
            client.start(UpstreamRequest(url: "http://127.0.0.1:\(idleOrigin.port)/sse", idleTimeoutMs: 0), handler: RecordingHandler())
        }
        defer { idleStreams.forEach { $0.cancel() } }
        let idleDeadline = Date().addingTimeInterval(30)
        while idleOrigin.requests.count < idleCount && Date() < idleDeadline { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertEqual(idleOrigin.requests.count, idleCount, "not every idle stream connected")

        let driver = Driver(client: client, url: url, total: total)
        let started = Date()
        for _ in 0..<inFlight { driver.launch() }
        XCTAssertEqual(driver.done.wait(timeout: .now() + 300), .success)
        let seconds = Date().timeIntervalSince(started)
        print(String(format: "upstream throughput: %d requests, %d in flight, %d thread(s), %d idle streams, %.0f req/s, %d failures, %d connections",
                     total, inFlight, threads, idleCount, Double(total) / seconds, driver.failures.load(ordering: .relaxed), server?.connectionCount ?? -1))
    }
}
