import Foundation
import HTTPServer
import Synchronization

/// A local stand-in for an AI provider's generation endpoint, in the wire format of OpenAI's chat
/// completions or Anthropic's messages: a JSON answer with `usage`, or (for a body saying
/// `"stream": true`) server-sent events in that provider's shape, its usage where the provider
/// puts it (OpenAI: a last chunk with `usage` when the body asked `stream_options.include_usage`;
/// Anthropic: `message_start` and `message_delta`). Every request is recorded, and so is every
/// answer body as written, so a test can compare the bytes the client got with the bytes sent.
final class FakeAIProvider: Sendable {
    enum Format: Sendable { case openAI, anthropic }

    struct Received: Sendable {
        let target: String
        let body: [UInt8]
        /// Every `Accept-Encoding` value the request carried, in order.
        var acceptEncoding: [String] = []
    }

    let format: Format
    /// Tokens reported in `usage`.
    let inputTokens: Int
    let outputTokens: Int
    private let server: HTTPServer
    private let log = Log()

    final class Log: Sendable {
        let received = Mutex<[Received]>([])
        let answers = Mutex<[[UInt8]]>([])
    }

    init(_ format: Format, inputTokens: Int = 1_200, outputTokens: Int = 300) {
        self.format = format
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        let log = self.log
        server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2),
            bodyLimit: { _ in 1 << 20 },
            handler: { head, body, writer in
                let encodings = head.headers.filter { $0.name.lowercased() == "accept-encoding" }.map(\.value)
                log.received.withLock { $0.append(Received(target: head.target, body: body, acceptEncoding: encodings)) }
                let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
                let streams = object["stream"] as? Bool == true
                let includeUsage = (object["stream_options"] as? [String: Any])?["include_usage"] as? Bool == true
                let model = object["model"] as? String ?? "unknown"
                if streams {
                    let events = FakeAIProvider.events(format, model: model, includeUsage: includeUsage, input: inputTokens, output: outputTokens)
                    log.answers.withLock { $0.append(Array(events.joined().utf8)) }
                    let stream = writer.startStream(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
                    for event in events { _ = stream.write(Array(event.utf8)) }
                    stream.finish()
                } else {
                    let answer = Array(FakeAIProvider.json(format, model: model, input: inputTokens, output: outputTokens).utf8)
                    log.answers.withLock { $0.append(answer) }
                    writer.respond(status: 200, headers: [("Content-Type", "application/json")], body: answer)
                }
            })
    }

    func start() throws { try server.start() }
    func stop() { server.stop() }
    var port: UInt16 { server.port }
    var received: [Received] { log.received.withLock { $0 } }
    /// Each answer body as written, in order.
    var answers: [[UInt8]] { log.answers.withLock { $0 } }

    /// The `allow` path of the format's generation endpoint.
    var path: String { format == .openAI ? "/v1/chat/completions" : "/v1/messages" }

    static func json(_ format: Format, model: String, input: Int, output: Int) -> String {
        switch format {
        case .openAI:
            return #"{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"\#(model)","#
                + #""choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}],"#
                + #""usage":{"prompt_tokens":\#(input),"completion_tokens":\#(output),"total_tokens":\#(input + output)}}"#
        case .anthropic:
            return #"{"id":"msg_1","type":"message","role":"assistant","model":"\#(model)","#
                + #""content":[{"type":"text","text":"Hello there."}],"stop_reason":"end_turn","stop_sequence":null,"#
                + #""usage":{"input_tokens":\#(input),"output_tokens":\#(output)}}"#
        }
    }

    static func events(_ format: Format, model: String, includeUsage: Bool, input: Int, output: Int) -> [String] {
        switch format {
        case .openAI:
            let head = #"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"\#(model)","#
            var events = [
                "data: " + head + #""choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}"# + "\n\n",
                "data: " + head + #""choices":[{"index":0,"delta":{"content":" there."},"finish_reason":"stop"}]}"# + "\n\n",
            ]
            if includeUsage {
                events.append("data: " + head + #""choices":[],"usage":{"prompt_tokens":\#(input),"completion_tokens":\#(output),"total_tokens":\#(input + output)}}"# + "\n\n")
            }
            events.append("data: [DONE]\n\n")
            return events
        case .anthropic:
            return [
                "event: message_start\ndata: " + #"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"\#(model)","content":[],"stop_reason":null,"usage":{"input_tokens":\#(input),"output_tokens":1}}}"# + "\n\n",
                "event: content_block_start\ndata: " + #"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"# + "\n\n",
                "event: content_block_delta\ndata: " + #"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello there."}}"# + "\n\n",
                "event: content_block_stop\ndata: " + #"{"type":"content_block_stop","index":0}"# + "\n\n",
                "event: message_delta\ndata: " + #"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":\#(output)}}"# + "\n\n",
                "event: message_stop\ndata: " + #"{"type":"message_stop"}"# + "\n\n",
            ]
        }
    }
}
