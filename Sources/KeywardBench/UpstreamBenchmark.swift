import Foundation
import HTTPServer
import Keyward
import Synchronization
import Upstream

/// `keyward-bench upstream`: requests per second through the libcurl client alone, optionally with
/// many idle streams open on the same client (they must not slow the short requests down).
enum UpstreamBenchmark {
    static let usage = """
        usage: keyward-bench upstream [--url URL] [--requests N (20000)] [--concurrency N (32)]
                                      [--idle-streams N (0)]
        Without --url, a local HTTPServer answering "ok". Idle streams go to a local origin that
        sends a chunked head and then nothing.
        """

    static func run(_ arguments: [String]) -> Int32 {
        let options: CommandLineOptions
        do {
            options = try CommandLineOptions(arguments, valueFlags: ["url", "requests", "concurrency", "idle-streams"])
        } catch {
            print("\(error)\n\(usage)")
            return 2
        }
        let total = max(1, Int(options.value("requests") ?? "20000") ?? 20_000)
        let inFlight = max(1, Int(options.value("concurrency") ?? "32") ?? 32)
        let idleCount = max(0, Int(options.value("idle-streams") ?? "0") ?? 0)
        do {
            let ok = HTTPServer(
                configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0), bodyLimit: { _ in 0 },
                handler: { _, _, writer in writer.respond(status: 200, body: Array("ok".utf8)) })
            let hold = HTTPServer(
                configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, connectionLimit: max(1024, idleCount + 16)),
                bodyLimit: { _ in 0 },
                handler: { _, _, writer in _ = writer.startStream(status: 200, headers: [("Content-Type", "text/event-stream")]) })
            try ok.start()
            try hold.start()
            defer {
                hold.stop()
                ok.stop()
            }
            let url = options.value("url") ?? "http://127.0.0.1:\(ok.port)/"
            let client = UpstreamClient(configuration: .init(maxConnectionsPerHost: max(inFlight, idleCount)))
            defer { client.shutdown() }
            let idle = (0..<idleCount).map { _ in
                client.start(UpstreamRequest(url: "http://127.0.0.1:\(hold.port)/sse", idleTimeoutMs: 0), handler: Sink())
            }
            defer { idle.forEach { $0.cancel() } }
            Thread.sleep(forTimeInterval: idleCount > 0 ? 1 : 0)

            let driver = Driver(client: client, url: url, total: total)
            let started = DispatchTime.now()
            for _ in 0..<inFlight { driver.launch() }
            driver.done.wait()
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            print(String(format: "upstream client: %d requests, %d in flight, %d idle streams: %.0f req/s, %d failures",
                         total, inFlight, idleCount, Double(total) / seconds, driver.failures.load(ordering: .relaxed)))
            return driver.failures.load(ordering: .relaxed) == 0 ? 0 : 1
        } catch {
            print("keyward-bench upstream: \(error)")
            return 1
        }
    }

    /// Keeps `inFlight` transfers running: each completion starts the next request.
    final class Driver: UpstreamResponseHandler, Sendable {
        let client: UpstreamClient
        let url: String
        let total: Int
        let remaining: Atomic<Int>
        let finished = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)

        init(client: UpstreamClient, url: String, total: Int) {
            self.client = client
            self.url = url
            self.total = total
            remaining = Atomic(total)
        }

        func launch() {
            guard remaining.subtract(1, ordering: .relaxed).newValue >= 0 else { return }
            client.start(UpstreamRequest(url: url), handler: self)
        }

        func upstreamHead(status: Int, headers: [(String, String)]) {}
        func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool { true }
        func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) {
            if error != nil { failures.add(1, ordering: .relaxed) }
            if finished.add(1, ordering: .relaxed).newValue == total { done.signal() } else { launch() }
        }
    }

    /// Discards an idle stream's bytes.
    final class Sink: UpstreamResponseHandler, Sendable {
        func upstreamHead(status: Int, headers: [(String, String)]) {}
        func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool { true }
        func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) {}
    }
}
