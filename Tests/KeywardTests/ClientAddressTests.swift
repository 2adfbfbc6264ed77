import Foundation
import Keyward
import KeywardDemo
import ProviderRegistry
import XCTest

/// The client address behind a front: forwarding headers believed only from `trusted_proxies`,
/// walked from the right; the handshake limiter keyed per IPv4 address and per IPv6 /64.
final class ClientAddressTests: XCTestCase {
    let front = TrustedProxies(["10.0.0.0/8", "fd00::/8"].compactMap(AddressRange.parse))

    /// The IPv4 text is written without inet_ntop: it must be inet_ntop's, byte for byte (no
    /// leading zeros), for one-, two- and three-digit parts in every position.
    func testIPv4TextIsWhatInetNtopWrites() throws {
        let parts: [UInt8] = [0, 1, 9, 10, 42, 99, 100, 199, 200, 255]
        for a in parts {
            for b in parts {
                let bytes = [a, b, b, a]
                var address = in_addr()
                withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
                var buffer = [CChar](repeating: 0, count: 16)
                XCTAssertNotNil(inet_ntop(AF_INET, &address, &buffer, 16))
                let expected = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let parsed = try XCTUnwrap(IPAddress.parse(expected))
                XCTAssertEqual(parsed.bytes, bytes)
                XCTAssertEqual(parsed.description, expected)
                XCTAssertEqual(parsed.limiterKey, expected)
            }
        }
    }

    func testHeadersFromAnUntrustedPeerAreIgnored() {
        XCTAssertEqual(front.clientAddress(peer: "198.51.100.9", forwardedFor: ["203.0.113.7"], forwarded: [])?.description, "198.51.100.9")
        XCTAssertEqual(TrustedProxies().clientAddress(peer: "10.0.0.2", forwardedFor: ["203.0.113.7"], forwarded: [])?.description, "10.0.0.2")
        XCTAssertEqual(front.clientAddress(peer: "198.51.100.9", forwardedFor: [], forwarded: ["for=203.0.113.7"])?.description, "198.51.100.9")
    }

    func testTheRightmostUntrustedHopIsTheClient() {
        // The client prepended a fake hop; the front appended the address it saw.
        XCTAssertEqual(front.clientAddress(peer: "10.0.0.2", forwardedFor: ["1.2.3.4, 203.0.113.7"], forwarded: [])?.description, "203.0.113.7")
        // Two fronts: the inner one's address is skipped as trusted.
        XCTAssertEqual(front.clientAddress(peer: "10.0.0.2", forwardedFor: ["203.0.113.7", "10.1.1.1"], forwarded: [])?.description, "203.0.113.7")
        // Every hop trusted: the leftmost.
        XCTAssertEqual(front.clientAddress(peer: "10.0.0.2", forwardedFor: ["10.9.9.9, 10.1.1.1"], forwarded: [])?.description, "10.9.9.9")
        // Junk ends the walk at the last trusted hop, which is then the client.
        XCTAssertEqual(front.clientAddress(peer: "10.0.0.2", forwardedFor: ["203.0.113.7, evil"], forwarded: [])?.description, "10.0.0.2")
        // No header: the peer.
        XCTAssertEqual(front.clientAddress(peer: "10.0.0.2", forwardedFor: [], forwarded: [])?.description, "10.0.0.2")
    }

    func testForwardedForValuesAreRead() {
        let forwarded = [#"for=1.2.3.4;proto=https, for="[2001:db8:cafe::17]:4711";by=10.0.0.2"#]
        XCTAssertEqual(front.clientAddress(peer: "10.0.0.2", forwardedFor: [], forwarded: forwarded)?.description, "2001:db8:cafe::17")
        XCTAssertEqual(front.clientAddress(peer: "10.0.0.2", forwardedFor: [], forwarded: ["for=203.0.113.7:8080"])?.description, "203.0.113.7")
        // X-Forwarded-For wins when both are sent.
        XCTAssertEqual(front.clientAddress(peer: "10.0.0.2", forwardedFor: ["203.0.113.8"], forwarded: ["for=203.0.113.7"])?.description, "203.0.113.8")
    }

    func testAddressFormsAndRanges() throws {
        XCTAssertEqual(IPAddress.parse("::ffff:192.0.2.1")?.description, "192.0.2.1")
        XCTAssertNil(IPAddress.parse("example.com"))
        XCTAssertNil(IPAddress.parse("1.2.3.4:80"))
        XCTAssertNil(AddressRange.parse("10.0.0.0/33"))
        XCTAssertNil(AddressRange.parse("10.0.0.0/+8"))
        let range = try XCTUnwrap(AddressRange.parse("192.168.4.0/22"))
        XCTAssertTrue(range.contains(try XCTUnwrap(IPAddress.parse("192.168.7.255"))))
        XCTAssertFalse(range.contains(try XCTUnwrap(IPAddress.parse("192.168.8.0"))))
        XCTAssertFalse(range.contains(try XCTUnwrap(IPAddress.parse("::1"))))
    }

    func testIPv6ClientsShareABucketPerSlash64() throws {
        func key(_ text: String) throws -> String { try XCTUnwrap(IPAddress.parse(text)).limiterKey }
        XCTAssertEqual(try key("2001:db8:1:2::a"), "2001:db8:1:2::/64")
        XCTAssertEqual(try key("2001:db8:1:2::a"), try key("2001:db8:1:2:ffff:eeee:dddd:b"))
        XCTAssertNotEqual(try key("2001:db8:1:2::a"), try key("2001:db8:1:3::a"))
        XCTAssertEqual(try key("203.0.113.7"), "203.0.113.7")
        XCTAssertNotEqual(try key("203.0.113.7"), try key("203.0.113.8"))
        let limiter = ClientRateLimiter(ratePerSecond: 0.001, burst: 1)
        XCTAssertNil(limiter.acquire(address: try key("2001:db8:1:2::a"), nowMillis: 0))
        XCTAssertNotNil(limiter.acquire(address: try key("2001:db8:1:2::b"), nowMillis: 0), "same /64: same bucket")
        XCTAssertNil(limiter.acquire(address: try key("2001:db8:1:3::a"), nowMillis: 0), "another /64: its own bucket")
    }

    // MARK: over HTTP

    /// Handshake statuses of `/v1/challenge` for each X-Forwarded-For value, in order.
    private func challengeStatuses(_ env: TestDeployment, _ forwardedFor: [String]) throws -> [Int] {
        try forwardedFor.map { try env.client.postJSON("/v1/challenge", [:], headers: [("X-Forwarded-For", $0)]).0.status }
    }

    private func clients(_ env: TestDeployment) throws -> [String] {
        try env.logLines.compactMap { line -> String? in
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard object["route"] as? String == "challenge" else { return nil }
            return object["client"] as? String
        }
    }

    func testSpoofedForwardedForFromAnUntrustedPeerIsIgnored() throws {
        let env = try TestDeployment(settings: {
            $0.handshakeBurst = 2
            $0.handshakeRatePerSecond = 0.001
        })
        defer { env.shutdown() }
        // Each request claims another address; all come from 127.0.0.1, which is not trusted.
        XCTAssertEqual(try challengeStatuses(env, ["203.0.113.1", "203.0.113.2", "203.0.113.3"]), [200, 200, 429])
        XCTAssertEqual(try clients(env), ["127.0.0.1", "127.0.0.1", "127.0.0.1"])
    }

    func testForwardedForFromATrustedPeerNamesTheClient() throws {
        let env = try TestDeployment(settings: {
            $0.handshakeBurst = 2
            $0.handshakeRatePerSecond = 0.001
            $0.trustedProxies = TrustedProxies(["127.0.0.1"].compactMap(AddressRange.parse))
        })
        defer { env.shutdown() }
        // 203.0.113.7 spends its two tokens (its fake leftmost hop changes nothing); 203.0.113.8 has its own.
        XCTAssertEqual(try challengeStatuses(env, ["203.0.113.7", "1.1.1.1, 203.0.113.7", "203.0.113.7", "203.0.113.8"]), [200, 200, 429, 200])
        XCTAssertEqual(try clients(env), ["203.0.113.7", "203.0.113.7", "203.0.113.7", "203.0.113.8"])
        // IPv6 clients: one /64 shares a bucket, another /64 does not.
        XCTAssertEqual(try challengeStatuses(env, ["2001:db8:1:2::a", "2001:db8:1:2::b", "2001:db8:1:2::c", "2001:db8:1:3::a"]), [200, 200, 429, 200])
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_rate_limited_total", ["limit": "handshake_ip"]), 2)
    }
}

/// `max_upstream_connections`: requests in flight to one provider from one instance, streams
/// counting while they run.
final class UpstreamConnectionLimitTests: XCTestCase {
    func testARequestOverTheProvidersBoundIsRefusedAtOnceAndTheSlotComesBack() throws {
        // The stream is paced: 3 events 300 ms apart, so it is still running when the second request comes.
        let env = try TestDeployment(chatOptions: "max_upstream_connections = 1", eventCount: 3, eventGapMillis: 300)
        defer { env.shutdown() }
        let (_, token) = try env.session()
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let streamStatus = ConcurrentResults<Int>()
        DispatchQueue.global().async {
            let once = ConcurrentResults<Bool>()
            let result = try? env.client.stream("POST", "/p/chat/v1/chat/completions", headers: [env.bearer(token)], body: Array("{}".utf8)) { _ in
                if once.values.isEmpty { once.append(true); started.signal() }
            }
            streamStatus.append(result?.status ?? 0)
            finished.signal()
        }
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
        let refused = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(refused.status, 503)
        XCTAssertEqual(refused.header("retry-after"), "1")
        XCTAssertEqual(env.lastReason(route: "proxy"), "upstream_connections_full")
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(streamStatus.values, [200])
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_rate_limited_total", ["limit": "upstream_connections"]), 1)
        // The stream's slot is free again.
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
    }

    func testTheBoundIsValidated() {
        XCTAssertThrowsError(try ProviderRegistry.parse(text: TestDeployment.chatProvider(port: 9, options: "max_upstream_connections = 0"), path: "p.toml")) { error in
            XCTAssertTrue("\(error)".contains("max_upstream_connections"), "\(error)")
        }
    }
}
