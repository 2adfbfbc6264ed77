import Foundation
import Keyward
import Synchronization
import XCTest

/// A large answer on a reused upstream connection reaches a slow client whole.
///
/// The shape that cut such answers at about 290 KB: a few small calls leave warm connections in
/// libcurl's cache; the next, large answer arrives on one of them all at once, the client does not
/// read yet, so the transfer pauses before libcurl has said which transfer the socket now serves.
/// Whatever guards idle connections must still know the socket is in use.
final class ProxyConnectionReuseTests: XCTestCase {
    func testSixteenMebibyteAnswersAfterWarmCallsAreNeverCutForASlowReader() throws {
        let upstream = try SizedUpstream()
        defer { upstream.stop() }
        let env = try TestDeployment(extraProviders: { _ in
            TestDeployment.loopbackProvider("sized", port: upstream.port, allow: [("GET", "/small"), ("GET", "/big")],
                                            extra: "idle_timeout_ms = 20000")
        })
        defer { env.shutdown() }
        let (_, token) = try env.session()
        let port = env.deployment.server.port
        let request: @Sendable (String) -> String = { target in
            "GET /p/sized\(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n"
        }

        // 200 tries, as the reproduction ran them. Run one after another they take over two
        // minutes (each waits 0.5 s); ten at a time keep the shape of each try and finish in CI time.
        let tries = 200, parallel = 10
        let expected = 16 << 20
        let outcomes = Mutex<[String]>([])
        let next = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<parallel {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while next.add(1, ordering: .relaxed).oldValue < tries {
                    let outcome: String
                    do {
                        let connection = try RawConnection(port: port, receiveTimeout: 20)
                        for _ in 0..<6 {
                            let small = try connection.exchange(request("/small"))
                            guard small.status == 200, small.body == Array("{}".utf8) else {
                                throw RawConnection.Failure.malformed("small call: \(small.status)")
                            }
                        }
                        try connection.send(request("/big?mb=16"))
                        // The slow reader is the behaviour under test: nothing is read for 0.5 s.
                        Thread.sleep(forTimeInterval: 0.5)  // the slow reader of the reproduction: the behaviour under test
                        let big = try connection.readResponse(countOnly: true)
                        outcome = big.status == 200 && big.bodyCount == expected ? "whole" : "status \(big.status), \(big.bodyCount) bytes"
                    } catch {
                        outcome = "failed: \(error)"
                    }
                    outcomes.withLock { $0.append(outcome) }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 240), .success, "the tries did not finish")
        let all = outcomes.withLock { $0 }
        let bad = all.filter { $0 != "whole" }
        XCTAssertEqual(all.count, tries)
        XCTAssertEqual(bad, [], "\(bad.count) of \(all.count) answers were not whole; cuts: \(env.logLines.filter { $0.contains("stream_cut") }.prefix(3))")
    }
}
