import Foundation
import Keyward
import KeywardCrypto
import Synchronization
import Upstream

/// The app side of the demo and the end-to-end tests: plain HTTP calls to a Keyward on loopback,
/// made with the same libcurl client the proxy uses upstream.
public struct DemoClient: Sendable {
    /// `http://127.0.0.1:<port>`, no trailing slash: each call's path is appended to it.
    public let baseURL: String
    let client: UpstreamClient

    /// - Parameters:
    ///   - baseURL: scheme, host and port of the Keyward under test, no trailing slash.
    ///   - client: the libcurl client that carries the calls (the caller shuts it down).
    public init(baseURL: String, client: UpstreamClient) {
        self.baseURL = baseURL
        self.client = client
    }

    /// One buffered exchange: `path` is appended to the base URL as is (no normalization).
    /// Connect timeout 2 s, idle timeout 10 s; response body capped at 8 MiB.
    /// - Throws: `UpstreamError` (`connect`, `timeout`, `responseTooLarge` over 8 MiB, …).
    public func call(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> UpstreamResponse {
        try client.perform(
            UpstreamRequest(url: baseURL + path, method: method, headers: headers, body: body,
                            connectTimeoutMs: 2_000, idleTimeoutMs: 10_000),
            maxResponseBytes: 8 << 20)
    }

    /// POSTs a JSON object built from string fields and returns the response with its body parsed
    /// as a JSON object (empty when it is not one). Sends `Content-Type: application/json`.
    /// - Throws: `UpstreamError` as `call`; a Foundation error if `fields` cannot be serialized.
    public func postJSON(_ path: String, _ fields: [String: String], headers: [(String, String)] = []) throws -> (UpstreamResponse, [String: Any]) {
        let body = try JSONSerialization.data(withJSONObject: fields)
        let response = try call("POST", path, headers: [("Content-Type", "application/json")] + headers, body: Array(body))
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response, object)
    }

    /// A streamed call: `onChunk` runs for each piece of the body as it arrives (on the client's
    /// thread); returns the status, header fields and whole body when the transfer ends.
    /// Connect timeout 2 s, idle timeout 10 s; no cap on the body.
    /// - Throws: `UpstreamError` when the transfer fails, before or after the response head.
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
