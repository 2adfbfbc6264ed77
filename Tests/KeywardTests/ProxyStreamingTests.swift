import Foundation
import Keyward
import KeywardDemo
import Synchronization
import Upstream
import TestWaiting
import XCTest

/// Long and abandoned streams through the proxy: memory stays flat, a leaving client stops the upstream.
final class ProxyStreamingTests: XCTestCase {
    func firehoseProviderTOML(port: UInt16) -> String {
        TestDeployment.loopbackProvider("hose", port: port, allow: [("GET", "/stream")], extra: "idle_timeout_ms = 10000")
    }

    func testHundredMebibyteStreamPassesWithFlatMemory() throws {
        let total = 100 << 20
        let hose = FirehoseProvider(totalBytes: total)
        try hose.start()
        defer { hose.stop() }
        let env = try TestDeployment(extraProviders: { _ in self.firehoseProviderTOML(port: hose.port) })
        defer { env.shutdown() }
        let (_, token) = try env.session()

        let before = residentBytes()
        let collector = CountingHandler()
        _ = env.deployment.upstream.start(
            UpstreamRequest(url: env.deployment.baseURL + "/p/hose/stream", method: "GET", headers: [env.bearer(token)], body: [],
                            connectTimeoutMs: 2000, idleTimeoutMs: 10_000),
            handler: collector)
        try collector.wait()
        XCTAssertEqual(collector.received.load(ordering: .relaxed), total)
        let growth = collector.peak.load(ordering: .relaxed) - before
        XCTAssertLessThan(growth, 16 << 20, "resident memory grew by \(growth >> 20) MiB")
    }

    func testClientDisconnectMidStreamIsSeenUpstreamWithinOneSecond() throws {
        let hose = FirehoseProvider(totalBytes: 1 << 40)
        try hose.start()
        defer { hose.stop() }
        let env = try TestDeployment(extraProviders: { _ in self.firehoseProviderTOML(port: hose.port) })
        defer { env.shutdown() }
        let (_, token) = try env.session()

        let collector = CountingHandler()
        let transfer = env.deployment.upstream.start(
            UpstreamRequest(url: env.deployment.baseURL + "/p/hose/stream", method: "GET", headers: [env.bearer(token)], body: [],
                            connectTimeoutMs: 2000, idleTimeoutMs: 10_000),
            handler: collector)
        XCTAssertTrue(waitUntil(timeout: 30) { collector.received.load(ordering: .relaxed) >= 4 << 20 }, "the stream never reached 4 MiB")
        let leftAt = DispatchTime.now()
        transfer.cancel()
        var closedAt: DispatchTime?
        _ = waitUntil(timeout: 2) {
            closedAt = hose.shared.state.withLock { $0.closedAt }
            return closedAt != nil
        }
        let seen = try XCTUnwrap(closedAt, "the upstream never saw the client leave")
        let millis = Double(seen.uptimeNanoseconds - leftAt.uptimeNanoseconds) / 1e6
        XCTAssertLessThan(millis, 1000)
        // The client left: logged as such, and not counted against the provider.
        let logged = waitUntil(timeout: 2) {
            env.logLines.contains { $0.contains("\"provider\":\"hose\"") && $0.contains("\"reason\":\"client_gone\"") }
        }
        XCTAssertTrue(logged, "no client_gone line: \(env.logLines.suffix(2))")
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_upstream_errors_total", ["provider": "hose", "reason": "upstream_cancelled"]), 0)
    }
}

/// Counts streamed bytes without keeping them, sampling resident memory as it goes.
final class CountingHandler: UpstreamResponseHandler, Sendable {
    let received = Atomic<Int>(0)
    let peak = Atomic<Int>(0)
    let done = DispatchSemaphore(value: 0)
    let failure = Mutex<UpstreamError?>(nil)

    func upstreamHead(status: Int, headers: [(String, String)]) {}

    func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
        let total = received.add(chunk.count, ordering: .relaxed).newValue
        if total % (8 << 20) < chunk.count {
            let rss = residentBytes()
            if rss > peak.load(ordering: .relaxed) { peak.store(rss, ordering: .relaxed) }
        }
        return true
    }

    func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) {
        failure.withLock { $0 = error }
        done.signal()
    }

    func wait() throws {
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
