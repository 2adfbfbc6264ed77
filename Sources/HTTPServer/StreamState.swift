/// The producer side of one streamed response, guarded by its request's lock.
struct StreamState {
    /// Bytes written and not yet handed to libmicrohttpd.
    var queue = ByteQueue()
    /// ``ResponseStream/write(_:)`` returns false above this many buffered bytes.
    let highWater: Int
    /// `Content-Length` the producer declared, if any: the stream then ends after exactly this many bytes.
    let declaredLength: UInt64?
    /// The producer called ``ResponseStream/finish()``.
    var finished = false
    /// The producer called ``ResponseStream/abort()``.
    var aborted = false
    /// A write returned false and ``ResponseStream/onWritable`` is owed.
    var writableOwed = false
    var onWritable: (@Sendable () -> Void)?

    /// Buffered bytes at or below which a producer told to wait is called back.
    var lowWater: Int { highWater / 2 }
}
