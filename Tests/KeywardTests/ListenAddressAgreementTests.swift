import Foundation
import KeywardDemo
import XCTest

/// `check-config` and `serve` agree on `[listen]` addresses: what one accepts the other binds
/// (`localhost` is the loopback address), and a listener `serve` cannot open is named by file,
/// line and key like any configuration error.
final class ListenAddressAgreementTests: XCTestCase {
    private let environment = ["KEYWARD_SESSION_KEY": CommandLineTests.sessionKeyPEM, "CHAT_KEY": "k"]

    private func providers(_ folder: TemporaryFolder) throws {
        _ = try folder.write("providers.toml", TestDeployment.loopbackProvider("up", port: 9, allow: [("GET", "/v1/models")]))
    }

    func testLocalhostProxyAddressIsAcceptedByCheckConfigAndBoundByServe() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try providers(folder)
        let serve = try ServeProcess(folder: folder, storePath: folder.path + "/keyward.db", environment: environment, proxyHost: "localhost")
        defer { serve.stop() }
        let checked = try KeywardBinary.run(["check-config", "--config", serve.configPath], environment: environment)
        XCTAssertEqual(checked.status, 0, checked.stdout + checked.stderr)
        XCTAssertTrue(serve.waitFor("started"), serve.lines.joined(separator: "\n"))
        let client = DemoClient(baseURL: "http://127.0.0.1:\(serve.port)", client: sharedClient)
        XCTAssertEqual(try client.call("GET", "/healthz").status, 200)
    }

    func testAnAddressServeCannotListenOnIsNamedByFileLineAndKey() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try providers(folder)
        // A well-formed IPv4 address that is not one of this machine's: check-config cannot know.
        let serve = try ServeProcess(folder: folder, storePath: folder.path + "/keyward.db", environment: environment, proxyHost: "192.0.2.1")
        defer { serve.stop() }
        let checked = try KeywardBinary.run(["check-config", "--config", serve.configPath], environment: environment)
        XCTAssertEqual(checked.status, 0, checked.stdout + checked.stderr)
        XCTAssertEqual(serve.waitForExit(), 1)
        let output = serve.lines.joined(separator: "\n")
        // Line 3 of the file ServeProcess writes is `proxy = "192.0.2.1:…"`.
        XCTAssertTrue(output.contains(serve.configPath + ":3: listen.proxy: could not listen on 192.0.2.1:\(serve.port)"), output)
    }
}
