import Dispatch
import HTTPServer
import Keyward
import Synchronization

/// A stand-in third-party API on loopback, for the demo, tests and benchmarks.
///
/// It answers like a chat-completions provider: `POST …/chat/completions` streams server-sent
/// events (`data: 1`, `data: 2`, …, `data: [DONE]`) with a pause between them, so a client can see
/// each event arrive before the next is written; anything else gets a small JSON echo of what
/// arrived (method, path, query, header names). It records every request it sees (tests check
/// what crossed the proxy) and whether it carried the expected key — never the key itself.
public final class FakeProvider: Sendable {
    /// What one request looked like when it reached the provider.
    public struct Received: Sendable {
        /// The method token as sent (`GET`, `POST`).
        public let method: String
        /// The raw request-target as sent, query included (RFC 9112 §3.2): what the proxy forwarded.
        public let target: String
        /// Header fields in arrival order, names and values as sent.
        public let headers: [(name: String, value: String)]
        /// The whole request body, bytes (up to 16 MiB).
        public let body: [UInt8]
    }

    /// The exact `Authorization` value it accepts (e.g. `Bearer sk-…`); anything else gets 401.
    public let expectedAuthorization: String
    /// How many numbered events a chat-completions stream sends before `data: [DONE]`.
    public let eventCount: Int
    /// The pause between two events of a stream, milliseconds.
    public let eventGapMillis: Int
    private let server: HTTPServer
    private let log = ReceivedLog()

    /// Requests in arrival order, shared with the server's handler.
    final class ReceivedLog: Sendable {
        let entries = Mutex<[Received]>([])
    }

    /// - Parameters:
    ///   - expectedAuthorization: the `Authorization` value a correctly proxied request carries.
    ///   - eventCount: numbered events before `[DONE]`.
    ///   - eventGapMillis: the pause before each event after the first, milliseconds.
    public init(expectedAuthorization: String, eventCount: Int = 3, eventGapMillis: Int = 300) {
        self.expectedAuthorization = expectedAuthorization
        self.eventCount = eventCount
        self.eventGapMillis = eventGapMillis
        let log = self.log
        server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2),
            bodyLimit: { _ in 16 << 20 },
            handler: { head, body, writer in
                log.entries.withLock { $0.append(Received(method: head.method, target: head.target, headers: head.headers, body: body)) }
                FakeProvider.answer(head, writer: writer, expectedAuthorization: expectedAuthorization,
                                    eventCount: eventCount, gapMillis: eventGapMillis)
            })
    }

    /// Starts listening on an ephemeral loopback port.
    /// - Throws: `HTTPServerError` (`startFailed`, or `notStartable` when started before).
    public func start() throws { try server.start() }
    /// Stops listening and cuts open streams; waits for the server's threads. Idempotent.
    public func stop() { server.stop() }
    /// The bound loopback port once started (the system chose it); 0 before `start()` and after `stop()`.
    public var port: UInt16 { server.port }
    /// Every request received so far, in arrival order.
    public var received: [Received] { log.entries.withLock { $0 } }

    static func answer(_ head: HTTPRequestHead, writer: ResponseWriter, expectedAuthorization: String, eventCount: Int, gapMillis: Int) {
        let authorized = head.header("authorization") == expectedAuthorization
        guard authorized else {
            writer.respond(status: 401, headers: [("Content-Type", "application/json")], body: Array("{\"error\":\"bad key\"}".utf8))
            return
        }
        if head.method == "POST" && head.path.hasSuffix("/chat/completions") {
            let stream = writer.startStream(
                status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("Set-Cookie", "tracking=1")])
            sendEvent(1, of: eventCount, on: stream, gapMillis: gapMillis)
            return
        }
        var names = head.headers.map { "\"" + $0.name.lowercased() + "\"" }
        names.sort()
        var target = ""
        LogLine.appendQuoted(head.target, to: &target)
        let json = "{\"method\":\"\(head.method)\",\"target\":\(target),\"header_names\":[\(names.joined(separator: ","))]}"
        writer.respond(status: 200, headers: [("Content-Type", "application/json"), ("X-Provider", "fake")], body: Array(json.utf8))
    }

    private static func sendEvent(_ number: Int, of total: Int, on stream: ResponseStream, gapMillis: Int) {
        if number > total {
            _ = stream.write(Array("data: [DONE]\n\n".utf8))
            stream.finish()
            return
        }
        _ = stream.write(Array("data: \(number)\n\n".utf8))
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(gapMillis)) {
            sendEvent(number + 1, of: total, on: stream, gapMillis: gapMillis)
        }
    }
}
