import Foundation
import KeywardCrypto
import Synchronization
import Upstream

/// The app side of the demo and the end-to-end tests: plain HTTP calls to a Keyward on loopback,
/// made with the same libcurl client the proxy uses upstream.
public struct DemoClient: Sendable {
    public let baseURL: String
    let client: UpstreamClient

    public init(baseURL: String, client: UpstreamClient) {
        self.baseURL = baseURL
        self.client = client
    }

    /// One buffered exchange: `path` is appended to the base URL as is (no normalization).
    public func call(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> UpstreamResponse {
        try client.perform(
            UpstreamRequest(url: baseURL + path, method: method, headers: headers, body: body,
                            connectTimeoutMs: 2_000, idleTimeoutMs: 10_000),
            maxResponseBytes: 8 << 20)
    }

    /// POSTs a JSON object built from string fields and returns the response with its body parsed
    /// as a JSON object (empty when it is not one).
    public func postJSON(_ path: String, _ fields: [String: String], headers: [(String, String)] = []) throws -> (UpstreamResponse, [String: Any]) {
        let body = try JSONSerialization.data(withJSONObject: fields)
        let response = try call("POST", path, headers: [("Content-Type", "application/json")] + headers, body: Array(body))
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response, object)
    }

    /// A streamed call: `onChunk` runs for each piece of the body as it arrives (on the client's
    /// thread); returns the status and whole body when the transfer ends.
    public func stream(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = [],
        onChunk: @escaping @Sendable ([UInt8]) -> Void
    ) throws -> (status: Int, headers: [(String, String)], body: [UInt8]) {
        let collector = StreamCollector(onChunk: onChunk)
        _ = client.start(
            UpstreamRequest(url: baseURL + path, method: method, headers: headers, body: body,
                            connectTimeoutMs: 2_000, idleTimeoutMs: 10_000),
            handler: collector)
        return try collector.wait()
    }
}

/// Gathers one streamed response and lets a caller block until it ends.
final class StreamCollector: UpstreamResponseHandler, Sendable {
    private struct State {
        var status = 0
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        var error: UpstreamError?
    }

    private let state = Mutex(State())
    private let done = DispatchSemaphore(value: 0)
    private let onChunk: @Sendable ([UInt8]) -> Void

    init(onChunk: @escaping @Sendable ([UInt8]) -> Void) { self.onChunk = onChunk }

    func upstreamHead(status: Int, headers: [(String, String)]) {
        state.withLock {
            $0.status = status
            $0.headers = headers
        }
    }

    func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
        let bytes = Array(chunk)
        state.withLock { $0.body.append(contentsOf: bytes) }
        onChunk(bytes)
        return true
    }

    func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) {
        state.withLock { $0.error = error }
        done.signal()
    }

    func wait() throws -> (status: Int, headers: [(String, String)], body: [UInt8]) {
        done.wait()
        let result = state.withLock { $0 }
        if let error = result.error { throw error }
        return (result.status, result.headers, result.body)
    }
}
