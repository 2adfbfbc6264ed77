import Foundation
import TestWaiting
import XCTest

/// A client that hangs up while its call waits at the provider: nothing can reach it and the
/// provider did not fail, so the call is logged and counted as 499 (nginx's "client closed
/// request") with reason `client_gone`, never as a 5xx that would page the operator.
final class ClientGoneTests: XCTestCase {
    var env: TestDeployment!
    var upstream: HeldUpstream!

    override func tearDown() {
        upstream?.release()
        env?.shutdown()
        upstream?.stop()
    }

    func testAClientThatHangsUpBeforeTheAnswerIsLoggedAndCountedAs499() throws {
        upstream = try HeldUpstream(answer: CreditReleaseTests.answer(200))
        let port = upstream.port
        env = try TestDeployment(extraProviders: { _ in CreditReleaseTests.provider("held", port: port) })
        let (_, token) = try env.session()
        do {
            let connection = try RawConnection(port: env.deployment.server.port)
            try connection.send("GET /p/held/x HTTP/1.1\r\nHost: keyward\r\nAuthorization: Bearer \(token)\r\n\r\n")
            XCTAssertTrue(upstream.waitForRequests(1), "the call never reached the provider")
        }   // the connection closes here: the client hung up
        let env = self.env!
        XCTAssertTrue(waitUntil { env.logLines.contains { $0.contains("\"provider\":\"held\"") } }, "the call was never logged")
        let line = try XCTUnwrap(env.logLines.last { $0.contains("\"provider\":\"held\"") })
        XCTAssertTrue(line.contains("\"status\":499"), line)
        XCTAssertTrue(line.contains("\"reason\":\"client_gone\""), line)
        XCTAssertTrue(line.contains("\"bytes_out\":0"), line)
        let metrics = env.deployment.service.metrics
        XCTAssertEqual(metrics.value("keyward_requests_total", ["route": "proxy", "provider": "held", "status": "499"]), 1)
        XCTAssertEqual(metrics.value("keyward_requests_total", ["route": "proxy", "provider": "held", "status": "502"]), 0)
    }
}
