import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import XCTest

/// `keyward serve` running as a child process on loopback, its log lines collected as they come.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    let port: UInt16
    let adminPort: UInt16
    let configPath: String
    private let lock = NSLock()
    private var buffer = Data()
    private let done = DispatchSemaphore(value: 0)
    /// Set once `done` has been waited for (it is signalled once).
    private var outputEnded = false

    /// Writes `keyward.toml` (listeners on free loopback ports, `extraTOML` appended) into
    /// `folder` next to an existing `providers.toml`, and starts serve with `environment`.
    /// The store is `storeURL` when given (a `postgres://…` shared by several instances),
    /// else the SQLite file at `storePath`. `proxyHost` is written as the proxy listener's host.
    init(folder: TemporaryFolder, storePath: String, storeURL: String? = nil, extraTOML: String = "", environment: [String: String],
         name: String = "keyward", proxyHost: String = "127.0.0.1") throws {
        port = freeLoopbackPort()
        adminPort = freeLoopbackPort()
        configPath = try folder.write("\(name).toml", """
            providers_file = "providers.toml"
            [listen]
            proxy = "\(proxyHost):\(port)"
            admin = "127.0.0.1:\(adminPort)"
            [store]
            url = "\(storeURL ?? "sqlite://" + storePath)"
            [apple]
            team_id = "ABCDE12345"
            bundle_ids = ["com.example.app"]
            environment = "production"
            \(extraTOML)
            """)
        process.executableURL = URL(fileURLWithPath: KeywardBinary.path)
        process.arguments = ["serve", "--config", configPath]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        let handle = pipe.fileHandleForReading
        DispatchQueue.global().async { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.lock(); buffer.append(chunk); lock.unlock()
            }
            done.signal()
        }
        try process.run()
    }

    /// Every complete log line so far.
    var lines: [String] {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Lines whose `event` is `event`.
    func events(_ event: String) -> [String] { lines.filter { $0.contains("\"event\":\"\(event)\"") } }

    /// Waits up to `seconds` for the `count`-th line of `event`; true when it came.
    @discardableResult
    func waitFor(_ event: String, count: Int = 1, seconds: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if events(event).count >= count { return true }
            if !process.isRunning { return events(event).count >= count }
            Thread.sleep(forTimeInterval: 0.01)  // polling the collected log; the deadline bounds it
        }
        return false
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to end (at most `seconds`); its exit status, nil when it did not end.
    func waitForExit(seconds: Double = 60) -> Int32? {
        lock.lock()
        let ended = outputEnded
        lock.unlock()
        if !ended {
            guard done.wait(timeout: .now() + seconds) == .success else { return nil }
            lock.lock(); outputEnded = true; lock.unlock()
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { process.terminate() }
        _ = waitForExit(seconds: 10)
    }

    /// `serve` in `folder` on a SQLite store there, with one provider `chat` (GET /v1/models, on a
    /// loopback port where nothing listens) and no readiness grace at stop; nil (with the log as
    /// the failure) when it does not log `started`.
    static func startedWithIdleProvider(in folder: TemporaryFolder, file: StaticString = #filePath, line: UInt = #line) throws -> ServeProcess? {
        _ = try folder.write("providers.toml", TestDeployment.loopbackProvider("chat", port: 9, allow: [("GET", "/v1/models")]))
        let serve = try ServeProcess(
            folder: folder, storePath: folder.path + "/keyward.db", extraTOML: "[shutdown]\nreadiness_grace_seconds = 0",
            environment: ["KEYWARD_SESSION_KEY": CommandLineTests.sessionKeyPEM, "CHAT_KEY": "k"])
        guard serve.waitFor("started") else {
            XCTFail(serve.lines.joined(separator: "\n"), file: file, line: line)
            serve.stop()
            return nil
        }
        return serve
    }
}

/// Whether a TCP connection to 127.0.0.1:`port` is refused (ECONNREFUSED) right now.
func connectionRefused(port: UInt16) -> Bool {
    let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socketFD) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    return result != 0 && errno == ECONNREFUSED
}
