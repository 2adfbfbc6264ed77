import Foundation
import Keyward
import TestWaiting
import XCTest

/// The official OpenAI Python SDK (pinned in scripts/openai-sdk-requirements.txt, installed from
/// PyPI into .build/openai-sdk-venv) calls a metered, rule-bound provider through Keyward against
/// the fake OpenAI, plain and streamed, with no change to the SDK: its base URL is
/// `/p/openai/v1` and its API key the Keyward session. Skipped, saying why, only when the
/// virtualenv cannot be made (no python3 venv module, PyPI out of reach).
final class OpenAISDKTests: XCTestCase {
    var env: TestDeployment?
    var openAI: FakeAIProvider?

    override func tearDown() {
        env?.shutdown()
        openAI?.stop()
    }

    static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)   // Tests/KeywardTests/SpendControl/OpenAISDKTests.swift
        return parts.joined(separator: "/")
    }()

    /// Runs `executable` with `arguments`; its exit status and standard output.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let errData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }

    /// The virtualenv's python, made (again) when the pinned requirements changed.
    static func virtualenvPython() throws -> String {
        let venv = root + "/.build/openai-sdk-venv"
        let requirements = root + "/scripts/openai-sdk-requirements.txt"
        let wanted = try String(contentsOfFile: requirements, encoding: .utf8)
        if (try? String(contentsOfFile: venv + "/requirements.txt", encoding: .utf8)) == wanted { return venv + "/bin/python" }
        try? FileManager.default.removeItem(atPath: venv)
        let (made, _, madeErrors) = try run("/usr/bin/env", ["python3", "-m", "venv", venv])
        guard made == 0 else { throw XCTSkip("the OpenAI SDK test needs a python3 virtualenv: \(madeErrors.suffix(300))") }
        let (installed, _, installErrors) = try run(venv + "/bin/pip", ["install", "-q", "--disable-pip-version-check", "-r", requirements])
        guard installed == 0 else { throw XCTSkip("the pinned OpenAI SDK could not be installed from PyPI: \(installErrors.suffix(300))") }
        try wanted.write(toFile: venv + "/requirements.txt", atomically: true, encoding: .utf8)
        return venv + "/bin/python"
    }

    func testTheOpenAISDKCallsAMeteredRuleBoundProviderPlainAndStreamed() throws {
        let python = try Self.virtualenvPython()
        let fake = FakeAIProvider(.openAI)
        openAI = fake
        try fake.start()
        var spend = SpendSettings()
        spend.installDailyCredits = 1_000
        let port = fake.port
        let env = try TestDeployment(extraProviders: { _ in MeteredProviders.toml(openAIPort: port, anthropicPort: port) },
                                     settings: { $0.spend = spend })
        self.env = env
        let (_, token) = try env.session()
        var environment = ProcessInfo.processInfo.environment
        environment["KEYWARD_BASE_URL"] = env.deployment.baseURL + "/p/openai/v1"
        environment["KEYWARD_TOKEN"] = token
        environment["MODEL"] = "gpt-4o-mini"
        let (status, output, errors) = try Self.run(python, [Self.root + "/scripts/openai-sdk-check.py"], environment: environment)
        XCTAssertEqual(status, 0, "the SDK failed: \(errors.suffix(2000))")
        let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], output)
        print("OpenAI SDK \(result["sdk"] ?? "?") through Keyward: \(output)")
        XCTAssertEqual(result["plain_text"] as? String, "Hello there.")
        XCTAssertEqual(result["plain_usage"] as? [Int], [1_200, 300])
        XCTAssertEqual(result["streamed_text"] as? String, "Hello there.")
        // The SDK did not ask for the stream's usage: Keyward did, and the SDK read the chunk as is.
        XCTAssertEqual(result["streamed_usage"] as? [Int], [1_200, 300])
        XCTAssertEqual(result["chunks"] as? Int, 3)

        let bodies = fake.received.map { String(decoding: $0.body, as: UTF8.self) }
        XCTAssertEqual(bodies.count, 2)
        XCTAssertTrue(bodies.allSatisfy { $0.hasSuffix(#""max_completion_tokens":1024}"#) || $0.contains(#""max_completion_tokens":1024,"stream_options":{"include_usage":true}}"#) }, "\(bodies)")
        // Both calls settled at 3 credits each.
        XCTAssertTrue(waitUntil {
            env.deployment.service.metrics.value("keyward_metered_calls_total", ["provider": "openai", "outcome": "settled"]) == 2
        })
        XCTAssertTrue(waitUntil {
            let response = try? env.client.call("GET", "/v1/usage", headers: [env.bearer(token)])
            let json = response.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any] }
            return (json?["daily_credits"] as? [String: Any])?["used"] as? Int == 2 * MeteredProviders.settled
        })
    }
}
