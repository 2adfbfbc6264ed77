import Foundation
import HTTPServer
import Keyward
import KeywardDemo
import Synchronization
import TestWaiting
import XCTest

/// What sharding changes at the process level: the listeners share one port, a second Keyward
/// cannot join it, and a drain spans every shard. (Every other proxy test runs sharded too.)
final class ShardedServingTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    func testASecondKeywardOnTheSamePortIsRefusedNotShared() throws {
        env = try TestDeployment(shards: 2)
        let second = KeywardServer(
            service: env.deployment.service,
            publicListener: HTTPServerConfiguration(host: "127.0.0.1", port: env.deployment.server.port),
            adminListener: nil, shards: 2)
        XCTAssertThrowsError(try second.start())
        // The first still answers.
        let (_, token) = try env.session()
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
    }

    func testAStreamStillRunningWhenTheGracePeriodEndsIsLoggedAsCutByTheStop() throws {
        env = try TestDeployment(eventCount: 3, eventGapMillis: 3_000, shards: 2)
        let (_, token) = try env.session()
        let firstEvent = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [env] in
            _ = try? env!.client.stream(
                "POST", "/p/chat/v1/chat/completions", headers: [env!.bearer(token)], body: Array("{}".utf8)
            ) { _ in firstEvent.signal() }
            ended.signal()
        }
        XCTAssertEqual(firstEvent.wait(timeout: .now() + 3), .success)
        env.deployment.server.drain(gracePeriodMilliseconds: 300)
        XCTAssertEqual(ended.wait(timeout: .now() + 3), .success)
        _ = waitUntil(timeout: 2) { env.lastReason(route: "proxy") != nil }
        XCTAssertEqual(env.lastReason(route: "proxy"), "stream_cut_server_stopping")
    }

    func testACallStillWaitingForTheProviderWhenTheDrainEndsIs503NotTheProvidersFailure() throws {
        let held = try HeldUpstream(answer: CreditReleaseTests.answer(200))
        defer { held.release(); held.stop() }
        let port = held.port
        env = try TestDeployment(extraProviders: { _ in CreditReleaseTests.provider("held", port: port) }, shards: 2)
        let (_, token) = try env.session()
        let answer = ConcurrentResults<Int>()
        let ended = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [env] in
            answer.append((try? env!.client.call("GET", "/p/held/x", headers: [env!.bearer(token)]).status) ?? -1)
            ended.signal()
        }
        XCTAssertTrue(held.waitForRequests(1), "the call never reached the provider")
        env.deployment.server.drain(gracePeriodMilliseconds: 300)
        XCTAssertEqual(ended.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(answer.values, [503])
        _ = waitUntil(timeout: 2) { env.lastReason(route: "proxy") != nil }
        XCTAssertEqual(env.lastReason(route: "proxy"), "cut_server_stopping")
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_upstream_errors_total", ["provider": "held", "reason": "upstream_cancelled"]), 0)
    }

    func testDrainLetsAStreamOnAnyShardFinishAndThenStopsEveryShard() throws {
        env = try TestDeployment(eventCount: 3, eventGapMillis: 200, shards: 2)
        let (_, token) = try env.session()
        let server = env.deployment.server
        let port = server.port
        let events = Mutex<[String]>([])
        let streamed = DispatchSemaphore(value: 0)
        let status = Mutex<Int?>(nil)
        Thread.detachNewThread { [env] in
            let result = try? env!.client.stream(
                "POST", "/p/chat/v1/chat/completions", headers: [env!.bearer(token)], body: Array("{}".utf8)
            ) { chunk in
                for event in String(decoding: chunk, as: UTF8.self).split(separator: "\n") {
                    events.withLock { $0.append(String(event)) }
                }
            }
            status.withLock { $0 = result?.status }
            streamed.signal()
        }
        _ = waitUntil(timeout: 3) { !events.withLock { $0.isEmpty } }
        XCTAssertEqual(events.withLock { $0.first }, "data: 1")

        let started = Date()
        server.drain(gracePeriodMilliseconds: 5_000)
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "drain waited past the last stream")
        XCTAssertEqual(streamed.wait(timeout: .now() + 3), .success)
        XCTAssertEqual(status.withLock { $0 }, 200)
        XCTAssertEqual(events.withLock { $0 }, ["data: 1", "data: 2", "data: 3", "data: [DONE]"])
        // Every shard's listener is closed: nothing accepts on the port any more.
        XCTAssertEqual(server.port, 0)
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(probe) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        XCTAssertNotEqual(connected, 0, "a shard still listens after drain")
    }
}
