import Foundation
import TestWaiting
import XCTest
@testable import Upstream

/// HTTPS verifies the upstream's certificate: a self-signed one is refused unless it is the
/// configured CA bundle. The TLS origin is `openssl s_server` (skipped where the CLI is missing).
final class TLSVerificationTests: XCTestCase {
    private var directory: URL!
    private var server: Process?
    private var port: UInt16 = 0

    override func setUpWithError() throws {
        let openssl = "/usr/bin/openssl"
        guard FileManager.default.isExecutableFile(atPath: openssl) else { throw XCTSkip("no openssl CLI") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("upstream-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try run(openssl, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", directory.appendingPathComponent("key.pem").path,
            "-out", directory.appendingPathComponent("cert.pem").path,
        ])
        let probe = try TestUpstreamServer { _, _ in }
        port = probe.port
        probe.stop()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = [
            "s_server", "-accept", "127.0.0.1:\(port)", "-www", "-quiet",
            "-cert", directory.appendingPathComponent("cert.pem").path,
            "-key", directory.appendingPathComponent("key.pem").path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        server = process
        try waitUntilListening()
    }

    override func tearDown() {
        server?.terminate()
        server?.waitUntilExit()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    func testSelfSignedCertificateIsRefusedAsConnect() throws {
        let client = UpstreamClient()
        defer { client.shutdown() }
        XCTAssertThrowsError(try client.perform(UpstreamRequest(url: "https://127.0.0.1:\(port)/"))) {
            XCTAssertEqual($0 as? UpstreamError, .connect)
        }
    }

    func testCertificateFromTheConfiguredBundleIsAccepted() throws {
        let client = UpstreamClient(configuration: .init(caBundlePath: directory.appendingPathComponent("cert.pem").path))
        defer { client.shutdown() }
        let response = try client.perform(UpstreamRequest(url: "https://127.0.0.1:\(port)/"), maxResponseBytes: 1 << 20)
        XCTAssertEqual(response.status, 200)
    }

    private func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw XCTSkip("openssl could not make a test certificate") }
    }

    /// Polls with plain connects (libcurl's own refusal is fast) until s_server accepts, up to 5 s.
    private func waitUntilListening() throws {
        let client = UpstreamClient()
        defer { client.shutdown() }
        for _ in 0..<100 {
            do throws(UpstreamError) {
                _ = try client.perform(UpstreamRequest(url: "http://127.0.0.1:\(port)/", connectTimeoutMs: 200, idleTimeoutMs: 200))
                return
            } catch {
                if error != .connect { return }  // something answered (badly, it speaks TLS): listening
            }
            Thread.sleep(forTimeInterval: 0.05)  // a bounded retry (100 tries) while s_server starts
        }
        throw XCTSkip("openssl s_server did not start")
    }
}
