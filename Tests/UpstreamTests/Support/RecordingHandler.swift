import Dispatch
import Foundation
import Synchronization
@testable import Upstream
import KeywardSupport

/// Records what a transfer delivers, with arrival times, for assertions from the test thread.
/// `bodyDecision` (set before `start`) decides each `upstreamBody` return value; the default keeps going.
final class RecordingHandler: UpstreamResponseHandler, @unchecked Sendable {
    struct Record {
        var status: Int?
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        var chunkTimes: [Date] = []
        var headCalls = 0
        var completions = 0
        var error: UpstreamError?
        var afterHead: Bool?
        var completedAt: Date?
        /// For each call, whether `threadProbe` said it ran on the client's thread.
        var callsOnClientThread: [Bool] = []
    }

    private let record = Locked(Record())
    private let completed = DispatchSemaphore(value: 0)
    private let keepBody: Bool
    let bodyDecision: @Sendable (_ received: Int, _ chunk: UnsafeRawBufferPointer) -> Bool
    let onChunk: @Sendable (Int) -> Void
    /// Set before `start` to record, per call, whether it runs on the client's thread.
    var threadProbe: (@Sendable () -> Bool)?

    /// - Parameters:
    ///   - keepBody: whether to keep the bytes (off for huge streams checked on the fly).
    ///   - bodyDecision: the return value for each chunk, given the byte count before it.
    ///   - onChunk: called after each chunk with the total received.
    init(
        keepBody: Bool = true,
        bodyDecision: @escaping @Sendable (Int, UnsafeRawBufferPointer) -> Bool = { _, _ in true },
        onChunk: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.keepBody = keepBody
        self.bodyDecision = bodyDecision
        self.onChunk = onChunk
    }

    var snapshot: Record { record.withLock { $0 } }
    var received: Int { record.withLock { $0.body.count } }

    /// Waits for `upstreamComplete`; false on timeout (seconds).
    func waitForCompletion(timeout: Double = 10) -> Bool {
        completed.wait(timeout: .now() + timeout) == .success
    }

    func upstreamHead(status: Int, headers: [(String, String)]) {
        let onClientThread = threadProbe?()
        record.withLock {
            $0.status = status
            $0.headers = headers
            $0.headCalls += 1
            if let onClientThread { $0.callsOnClientThread.append(onClientThread) }
        }
    }

    private let receivedCount = Atomic<Int>(0)

    func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
        let before = receivedCount.add(chunk.count, ordering: .relaxed).oldValue
        let decision = bodyDecision(before, chunk)
        let onClientThread = threadProbe?()
        if keepBody {
            record.withLock {
                $0.body.append(contentsOf: chunk)
                $0.chunkTimes.append(Date())
                if let onClientThread { $0.callsOnClientThread.append(onClientThread) }
            }
        }
        onChunk(before + chunk.count)
        return decision
    }

    /// Total body bytes seen (kept or not).
    var bytesSeen: Int { receivedCount.load(ordering: .relaxed) }

    func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) {
        let onClientThread = threadProbe?()
        record.withLock {
            if let onClientThread { $0.callsOnClientThread.append(onClientThread) }
            $0.completions += 1
            $0.error = error
            $0.afterHead = afterHead
            $0.completedAt = Date()
        }
        completed.signal()
    }
}

extension Array where Element == (String, String) {
    /// The header list as comparable "name: value" strings.
    var lines: [String] { map { "\($0.0): \($0.1)" } }
}
