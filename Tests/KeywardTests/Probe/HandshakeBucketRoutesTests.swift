import Foundation
import Keyward
import XCTest

/// The per-client-IP handshake bucket covers exactly the routes `keyward.toml`'s `[handshake]`
/// comment and README's `[handshake]` line name: found by spending a one-token bucket on each
/// public route in turn.
final class HandshakeBucketRoutesTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    static let publicPOSTRoutes = [
        "/v1/challenge", "/v1/attest/ios", "/v1/assert/ios", "/v1/attest/android", "/v1/refresh", "/v1/usage", "/healthz", "/readyz",
    ]

    /// The routes whose second call in a row, with one token and no refill, is refused by the bucket.
    private func routesTheBucketCovers() throws -> [String] {
        let clock = ManualTimeSource(seconds: 1_900_000_000)
        env = try TestDeployment(time: clock, settings: {
            $0.handshakeBurst = 1
            $0.handshakeRatePerSecond = 1.0 / 60
        })
        var covered: [String] = []
        for path in Self.publicPOSTRoutes {
            clock.advance(millis: 120_000)   // the bucket full again: one token
            _ = try env.client.call("POST", path, headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
            let second = try env.client.call("POST", path, headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
            if second.status == 429 {
                XCTAssertEqual(second.header("keyward-error"), "rate_limited", path)
                covered.append(path)
            }
        }
        return covered
    }

    /// The text of `file` (in the repository) from the line containing `start` through the line
    /// containing `end`.
    private func excerpt(_ file: String, from start: String, through end: String) throws -> String {
        let text = try String(contentsOf: KeywardBinary.repositoryRoot.appendingPathComponent(file), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let first = try XCTUnwrap(lines.firstIndex { $0.contains(start) }, "\(file): no line with \(start)")
        let last = try XCTUnwrap(lines[first...].firstIndex { $0.contains(end) }, "\(file): no line with \(end) after \(start)")
        return lines[first...last].joined(separator: "\n")
    }

    func testTheCommentAndTheREADMENameEveryRouteTheBucketCovers() throws {
        let covered = try routesTheBucketCovers()
        XCTAssertEqual(covered, ["/v1/challenge", "/v1/attest/ios", "/v1/assert/ios", "/v1/attest/android", "/v1/refresh"])
        let comment = try excerpt("keyward.toml", from: "[handshake]", through: "per_ip_per_minute")
        let readme = try excerpt("README.md", from: "[handshake]  ", through: "per_ip_per_minute")
        for (name, text) in [("keyward.toml", comment), ("README.md", readme)] {
            for path in Self.publicPOSTRoutes {
                XCTAssertEqual(text.contains(path), covered.contains(path), "\(name)'s [handshake] text and the bucket disagree on \(path):\n\(text)")
            }
        }
    }
}
