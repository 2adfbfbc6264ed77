import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An answer whose head has arrived; its body pieces arrive on `body` as the network delivers them.
struct StreamedAnswer: Sendable {
    /// The status line and header fields.
    let response: HTTPURLResponse
    /// The body, piece by piece; finishes at the end of the body, throws when the transfer fails.
    let body: AsyncThrowingStream<Data, Error>
}

/// One `URLSession` whose delegate hands each task's head to its caller as soon as it arrives and
/// then streams the body, so server-sent events reach the app event by event (the async
/// `data(for:)` would wait for the whole body). All callbacks run on one serial queue.
final class StreamingTransport: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// What one running task still owes its caller: the head (until it arrives) and the body.
    private struct Pending {
        var head: CheckedContinuation<StreamedAnswer, Error>?
        let body: AsyncThrowingStream<Data, Error>.Continuation
        let stream: AsyncThrowingStream<Data, Error>
    }

    /// Holds a task for the cancellation handlers, which run on any thread.
    private struct TaskHandle: @unchecked Sendable {
        let task: URLSessionDataTask
    }

    private let lock = NSLock()
    private var pending: [Int: Pending] = [:]
    private var session: URLSession?

    /// - Parameter configuration: the session's configuration (timeouts, connection limits).
    init(configuration: URLSessionConfiguration) {
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    /// Cancels every task and releases the session (which holds its delegate until invalidated).
    func invalidate() {
        lock.criticalSection { session }?.invalidateAndCancel()
    }

    /// Starts `request` and returns once the response head has arrived.
    /// - Throws: ``KeywardError/transport(_:)`` when the exchange fails before the head;
    ///   `CancellationError` when the calling task is cancelled.
    func start(_ request: URLRequest) async throws -> StreamedAnswer {
        guard let session = lock.criticalSection({ session }) else { throw KeywardError.transport("client invalidated") }
        let (stream, continuation) = AsyncThrowingStream<Data, Error>.makeStream()
        let handle = TaskHandle(task: session.dataTask(with: request))
        // A consumer that stops reading the body ends the transfer.
        continuation.onTermination = { termination in
            if case .cancelled = termination { handle.task.cancel() }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (head: CheckedContinuation<StreamedAnswer, Error>) in
                lock.criticalSection {
                    pending[handle.task.taskIdentifier] = Pending(head: head, body: continuation, stream: stream)
                }
                handle.task.resume()
            }
        } onCancel: {
            handle.task.cancel()
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let (head, stream) = lock.criticalSection { () -> (CheckedContinuation<StreamedAnswer, Error>?, AsyncThrowingStream<Data, Error>?) in
            let entry = pending[dataTask.taskIdentifier]
            pending[dataTask.taskIdentifier]?.head = nil
            return (entry?.head, entry?.stream)
        }
        guard let head, let stream else {
            completionHandler(.cancel)
            return
        }
        guard let http = response as? HTTPURLResponse else {
            head.resume(throwing: KeywardError.malformedAnswer("not an HTTP response"))
            completionHandler(.cancel)
            return
        }
        head.resume(returning: StreamedAnswer(response: http, body: stream))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let body = lock.criticalSection { pending[dataTask.taskIdentifier]?.body }
        body?.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let entry = lock.criticalSection({ pending.removeValue(forKey: task.taskIdentifier) }) else { return }
        let failure = error.map { KeywardError.transport(Self.describe($0)) }
        if let head = entry.head {
            head.resume(throwing: failure ?? KeywardError.malformedAnswer("no response head"))
        }
        if let failure { entry.body.finish(throwing: failure) } else { entry.body.finish() }
    }

    /// The error's domain and code (URL errors carry the URL, which holds no secret, but the code is enough).
    static func describe(_ error: Error) -> String {
        let nsError = error as NSError
        return "\(nsError.domain) \(nsError.code)"
    }
}
