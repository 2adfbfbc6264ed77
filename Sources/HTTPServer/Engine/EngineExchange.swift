import HTTPFields
import KeywardSupport

/// One request's answer in the engine, shared between the application's threads (which answer
/// and stream through ``ResponseWriter`` and ``ResponseStream``) and the loop thread that owns the
/// connection (which takes the answer and the stream's bytes and sends them).
///
/// Everything both sides touch is in `shared`, under its lock; callbacks are always called, and
/// released, outside it (releasing one may run a writer's or stream's deinit, which locks again).
/// The application never touches the connection: it tells the loop there is news with
/// ``EngineLoop/post(_:)``, and the loop then reads this exchange on its own thread.
final class EngineExchange: @unchecked Sendable {
    typealias Callback = @Sendable () -> Void

    /// The answer as given, until the loop takes it.
    enum Answer {
        case awaiting
        case complete(status: Int, headers: [(String, String)], body: [UInt8])
        case stream(status: Int, headers: [(String, String)])
        /// The loop took it (the head is written or being written).
        case taken
    }

    struct Shared {
        var answer = Answer.awaiting
        /// Stream bytes written and not yet handed to the connection.
        var queue: [[UInt8]] = []
        /// Bytes of `queue[0]` already taken (a piece bigger than one take).
        var headOffset = 0
        var queued = 0
        var streaming = false
        var finished = false
        var aborted = false
        /// A write returned false: `onWritable` is owed once the queue drains to the low-water mark.
        var writableOwed = false
        /// The loop found the queue empty and waits for the producer: the next write posts.
        var loopWantsData = false
        /// The connection ended (delivered or not): nothing more goes out.
        var ended = false
        /// The connection ended before the answer was delivered.
        var endedEarly = false
        var onClose: Callback?
        var onWritable: Callback?
    }

    /// The connection this answers; touched only by the loop thread (``EngineConnection``).
    let connection: EngineConnection
    /// ``ResponseStream/write(_:)`` returns false above this many queued bytes.
    let highWater: Int
    let shared = Locked(Shared())

    init(connection: EngineConnection, highWater: Int) {
        self.connection = connection
        self.highWater = highWater
    }

    private func post() {
        connection.loop.post(connection)
    }

    // MARK: The application's side (any thread)

    func respond(status: Int, headers: [(String, String)], body: [UInt8]) {
        let given = shared.withLock { shared -> Bool in
            guard case .awaiting = shared.answer, !shared.ended else { return false }
            shared.answer = .complete(status: status, headers: headers, body: body)
            return true
        }
        if given { post() }
    }

    func startStream(status: Int, headers: [(String, String)]) {
        let given = shared.withLock { shared -> Bool in
            guard case .awaiting = shared.answer, !shared.ended else { return false }
            shared.answer = .stream(status: status, headers: headers)
            shared.streaming = true
            return true
        }
        if given { post() }
    }

    func answerInternalErrorIfPending() {
        respond(status: 500, headers: [("Content-Type", "application/json"), ("Keyward-Error", "internal_error")],
                body: Array(#"{"error":"internal_error"}"#.utf8))
    }

    var isAwaitingResponse: Bool {
        shared.withLock { shared in
            if case .awaiting = shared.answer { return !shared.ended }
            return false
        }
    }

    var onClose: Callback? {
        get { shared.withLock { $0.onClose } }
        set {
            let (fireNow, replaced) = shared.withLock { shared -> (Bool, Callback?) in
                if shared.ended { return (shared.endedEarly, nil) }
                let replaced = shared.onClose
                shared.onClose = newValue
                return (false, replaced)
            }
            _ = replaced
            if fireNow { newValue?() }
        }
    }

    var onWritable: Callback? {
        get { shared.withLock { $0.onWritable } }
        set {
            let replaced = shared.withLock { shared -> Callback? in
                guard shared.streaming, !shared.ended else { return nil }
                let replaced = shared.onWritable
                shared.onWritable = newValue
                return replaced
            }
            _ = replaced
        }
    }

    func streamWrite(_ bytes: [UInt8]) -> Bool {
        let (accepted, wake) = shared.withLock { shared -> (Bool, Bool) in
            guard shared.streaming, !shared.ended, !shared.finished, !shared.aborted else { return (false, false) }
            if !bytes.isEmpty {
                shared.queue.append(bytes)
                shared.queued += bytes.count
            }
            let over = shared.queued > highWater
            if over { shared.writableOwed = true }
            let wake = shared.loopWantsData
            shared.loopWantsData = false
            return (!over, wake)
        }
        if wake { post() }
        return accepted
    }

    func streamFinish() {
        endStream { $0.finished = true }
    }

    func streamAbort() {
        endStream { $0.aborted = true }
    }

    private func endStream(_ mark: (inout Shared) -> Void) {
        let wake = shared.withLock { shared -> Bool in
            guard shared.streaming, !shared.ended, !shared.finished, !shared.aborted else { return false }
            mark(&shared)
            shared.loopWantsData = false
            return true
        }
        if wake { post() }
    }

    var streamBufferedBytes: Int {
        shared.withLock { $0.queued }
    }

    func streamAbortIfUnfinished() {
        streamAbort()
    }

    // MARK: The loop's side (loop thread)

    /// Takes the answer once it is given; nil while the application has given none.
    func takeAnswer() -> Answer? {
        shared.withLock { shared -> Answer? in
            switch shared.answer {
            case .awaiting, .taken:
                return nil
            case let answer:
                shared.answer = .taken
                return answer
            }
        }
    }

    /// What the loop takes from a stream in one go.
    struct Take {
        var pieces: [[UInt8]] = []
        var finished = false
        var aborted = false
        /// Nothing queued and the stream goes on: the producer's next write posts.
        var waiting = false
    }

    /// Takes up to about `limit` queued bytes (whole pieces) and says how the stream stands; fires
    /// an owed `onWritable` once the queue has drained to half the high-water mark.
    func takeStreamBytes(limit: Int) -> Take {
        var writable: Callback?
        let take = shared.withLock { shared -> Take in
            var take = Take()
            var taken = 0
            var count = 0
            while shared.headOffset == 0, count < shared.queue.count, taken + shared.queue[count].count <= limit {
                taken += shared.queue[count].count
                count += 1
            }
            if count > 0 {
                take.pieces = Array(shared.queue[..<count])
                shared.queue.removeFirst(count)
            } else if let first = shared.queue.first, limit > 0 {
                // A piece bigger than the limit goes out a part (a copy) at a time, so what waits
                // in the queue still counts against the high-water mark. Producers' usual pieces
                // (libcurl's 16 KiB) are smaller and go out as they are.
                let part = min(limit, first.count - shared.headOffset)
                take.pieces = [Array(first[shared.headOffset..<shared.headOffset + part])]
                taken = part
                shared.headOffset += part
                if shared.headOffset == first.count {
                    shared.queue.removeFirst()
                    shared.headOffset = 0
                }
            }
            shared.queued -= taken
            take.finished = shared.finished
            take.aborted = shared.aborted
            if shared.queue.isEmpty, !shared.finished, !shared.aborted {
                shared.loopWantsData = true
                take.waiting = count == 0
            }
            if shared.writableOwed, shared.queued <= highWater / 2 {
                shared.writableOwed = false
                writable = shared.onWritable
            }
            return take
        }
        writable?()
        return take
    }

    /// Whether the stream has nothing queued (its end may go out).
    var streamQueueIsEmpty: Bool {
        shared.withLock { $0.queue.isEmpty }
    }

    /// The connection ended. `delivered`: the answer went out in full (or the producer aborted
    /// it, which it knows of); otherwise `onClose` fires. Drops whatever is queued.
    func connectionEnded(delivered: Bool) {
        let (callback, released) = shared.withLock { shared -> (Callback?, [Callback?]) in
            guard !shared.ended else { return (nil, []) }
            shared.ended = true
            let delivered = delivered || shared.aborted
            shared.endedEarly = !delivered
            shared.queue = []
            shared.headOffset = 0
            shared.queued = 0
            let released = [shared.onClose, shared.onWritable]
            let callback = delivered ? nil : shared.onClose
            shared.onClose = nil
            shared.onWritable = nil
            return (callback, released)
        }
        callback?()
        _ = released
    }
}
