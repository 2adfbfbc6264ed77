import CMicroHTTPD
import CShims
import KeywardSupport
import HTTPFields

/// The streamed-response half of ``RequestContext``: the producer's calls
/// (any thread) and libmicrohttpd's content-reader callback (worker thread).
extension RequestContext {
    /// Starts a stream: installs its state and hands libmicrohttpd a response
    /// whose body comes from the reader. - Returns: false when a response was
    /// already given; the stream is then born closed.
    func beginStream(status: Int, headers: [(String, String)]) -> Bool {
        var declaredLength: UInt64?
        for (name, value) in headers where HTTPBytes.caseInsensitiveEquals(name, "content-length") {
            declaredLength = UInt64(value)
        }
        let state = StreamState(highWater: core.configuration.streamHighWaterBytes, declaredLength: declaredLength)
        let installed = shared.withLock { shared -> Bool in
            guard case .awaiting = shared.delivery, !shared.completed, shared.stream == nil else { return false }
            shared.stream = state
            return true
        }
        guard installed else { return false }

        let reader = Unmanaged.passRetained(self).toOpaque()
        let pointer = MHD_create_response_from_callback(
            declaredLength ?? UInt64.max,  // MHD_SIZE_UNKNOWN: chunked on HTTP/1.1, close-delimited on 1.0
            // 16 KiB, libcurl's chunk size: a 64 KiB block per response made glibc consolidate its
            // heap on every free (blocks ≥ 64 KiB trigger it), ~2% of a proxied request's CPU.
            16 * 1024,
            streamReaderCallback,
            reader,
            streamReaderFreeCallback
        )
        guard let pointer else {
            Unmanaged<RequestContext>.fromOpaque(reader).release()
            deliverFailedStream()
            return true
        }
        let response = PreparedResponse(pointer: pointer, status: UInt32(status), owned: true)
        guard (200...599).contains(status), response.addHeaders(headers) else {
            response.release()
            deliverFailedStream()
            return true
        }
        // libmicrohttpd 0.9.75 follows the head of a bodiless chunked response (HEAD, 204, 304)
        // with a stray "0\r\n\r\n": close the connection after it so no client reads it as the
        // next response. (`head` is written before the handler runs and never after.)
        if declaredLength == nil, head?.method == "HEAD" || status == 204 || status == 304 {
            _ = MHD_add_response_header(pointer, "Connection", "close")
        }
        deliver(response)
        return true
    }

    /// A stream whose response could not be made: answer 500 and mark the stream aborted.
    private func deliverFailedStream() {
        shared.withLock { shared in shared.stream?.aborted = true }
        if let canned = core.canned.internalError {
            deliver(PreparedResponse(pointer: canned, status: 500, owned: false))
        }
    }

    /// Appends bytes for the client. - Returns: false when over the high-water
    /// mark (wait for `onWritable`) or when the stream has ended.
    func streamWrite(_ bytes: [UInt8]) -> Bool {
        shared.withLock { shared -> Bool in
            guard !shared.completed, var stream = shared.stream, !stream.finished, !stream.aborted else { return false }
            stream.queue.append(bytes)
            let overHighWater = stream.queue.count > stream.highWater
            if overHighWater { stream.writableOwed = true }
            shared.stream = stream
            if shared.suspension == .forData { resumeLocked(&shared) }
            return !overHighWater
        }
    }

    func streamFinish() {
        shared.withLock { shared in
            guard shared.stream != nil else { return }
            shared.stream?.finished = true
            if shared.suspension == .forData { resumeLocked(&shared) }
        }
    }

    /// Ends the stream with a cut: what is queued still goes out (the reader drains it), then
    /// the connection closes without a clean end. A stream whose client is gone, or a server
    /// that is stopping, cuts at once (see ``readStream(into:capacity:position:)``).
    func streamAbort() {
        shared.withLock { shared in
            guard shared.stream != nil else { return }
            shared.stream?.aborted = true
            if shared.suspension == .forData { resumeLocked(&shared) }
        }
    }

    var streamBufferedBytes: Int {
        shared.withLock { $0.stream?.queue.count ?? 0 }
    }

    /// Installs `onWritable`; fires it at once when it is owed and already due.
    func setOnWritable(_ callback: Callback?) {
        // The replaced callback is released outside the lock (see `complete`).
        let replaced = shared.withLock { shared -> Callback? in
            guard shared.stream != nil, !shared.completed else { return nil }
            let replaced = shared.stream?.onWritable
            shared.stream?.onWritable = callback
            return replaced
        }
        _ = replaced
    }

    /// libmicrohttpd asks for up to `capacity` body bytes (worker thread).
    /// - Returns: bytes copied; 0 after suspending until the producer writes;
    ///   `KEYWARD_MHD_END_OF_STREAM` when finished; `KEYWARD_MHD_END_WITH_ERROR` to cut the connection.
    ///
    /// An aborted stream first hands out what is queued, then cuts: libmicrohttpd asks for more
    /// only once it has sent what the previous call gave it, so every byte the producer wrote
    /// before aborting reaches the client ahead of the close. Draining never suspends and is
    /// bounded by what is queued; with the client gone or the server stopping the cut is immediate.
    func readStream(into buffer: UnsafeMutableRawPointer, capacity: Int, position: UInt64) -> Int {
        var writable: (@Sendable () -> Void)?
        let result = shared.withLock { shared -> Int in
            guard var stream = shared.stream, !shared.clientGone else {
                return Int(KEYWARD_MHD_END_WITH_ERROR)
            }
            if stream.aborted {
                guard !shared.stopping, !stream.queue.isEmpty else { return Int(KEYWARD_MHD_END_WITH_ERROR) }
                var limit = capacity
                if let declared = stream.declaredLength {
                    limit = Int(min(UInt64(capacity), declared &- position))
                }
                guard limit > 0 else { return Int(KEYWARD_MHD_END_WITH_ERROR) }
                let copied = stream.queue.read(into: buffer, capacity: limit)
                shared.stream = stream
                return copied
            }
            if !stream.queue.isEmpty {
                var limit = capacity
                if let declared = stream.declaredLength {
                    // Never send more than the Content-Length the producer declared.
                    limit = Int(min(UInt64(capacity), declared &- position))
                }
                let copied = stream.queue.read(into: buffer, capacity: limit)
                if stream.writableOwed, stream.queue.count <= stream.lowWater {
                    stream.writableOwed = false
                    writable = stream.onWritable
                }
                shared.stream = stream
                return copied
            }
            if stream.finished {
                // A declared length not reached is a truncated body: cut, never pretend it ended.
                if let declared = stream.declaredLength, position < declared {
                    return Int(KEYWARD_MHD_END_WITH_ERROR)
                }
                return Int(KEYWARD_MHD_END_OF_STREAM)
            }
            if stream.writableOwed {
                stream.writableOwed = false
                writable = stream.onWritable
                shared.stream = stream
            }
            return suspendLocked(&shared, .forData) ? 0 : Int(KEYWARD_MHD_END_WITH_ERROR)
        }
        writable?()
        if result == Int(KEYWARD_MHD_END_WITH_ERROR) && socket >= 0 {
            // libmicrohttpd 0.9.75 sometimes ignores END_WITH_ERROR returned before the first body
            // byte went out and keeps the connection open with nothing more to send: the client
            // then waits forever (seen about once in 100 aborts that follow a write at once). Shutting
            // the socket down makes its next send fail, so it closes the connection itself. The
            // descriptor stays libmicrohttpd's to close.
            shutdown(socket, Int32(SHUT_RDWR))
        }
        return result
    }
}

/// `MHD_ContentReaderCallback` for streams; `cls` is a retained ``RequestContext``.
let streamReaderCallback: MHD_ContentReaderCallback = { cls, position, buffer, capacity in
    guard let cls, let buffer else { return Int(KEYWARD_MHD_END_WITH_ERROR) }
    let context = Unmanaged<RequestContext>.fromOpaque(cls).takeUnretainedValue()
    return context.readStream(into: UnsafeMutableRawPointer(buffer), capacity: capacity, position: position)
}

/// `MHD_ContentReaderFreeCallback`: libmicrohttpd is done with the response.
let streamReaderFreeCallback: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<RequestContext>.fromOpaque(cls).release()
}

extension RequestContext {
    /// A ``ResponseStream`` released unfinished: cut the connection rather than leave it waiting forever.
    func streamAbortIfUnfinished() {
        let unfinished = shared.withLock { shared -> Bool in
            guard let stream = shared.stream else { return false }
            return !stream.finished && !stream.aborted && !shared.completed
        }
        if unfinished { streamAbort() }
    }
}
