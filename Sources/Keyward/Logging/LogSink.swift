import Foundation
import Synchronization

/// Where JSON log lines go. One `write` per line, so concurrent lines never interleave.
public protocol LogSink: Sendable {
    /// Writes one complete line (without its trailing newline).
    func write(line: String)
    /// Writes one complete line given as UTF-8 (without its trailing newline); by default as a `String`.
    func write(utf8Line: [UInt8])
}

extension LogSink {
    /// Writes the line through ``write(line:)``.
    public func write(utf8Line: [UInt8]) { write(line: String(decoding: utf8Line, as: UTF8.self)) }
}

/// Writes lines to a file descriptor (standard error by default) with one `write(2)` each.
public struct FileDescriptorLogSink: LogSink {
    let descriptor: Int32

    /// Writes to `descriptor`, which the caller keeps open (standard error, fd 2, by default).
    public init(descriptor: Int32 = STDERR_FILENO) { self.descriptor = descriptor }

    /// Writes `line` and a newline with one `write(2)`, so concurrent lines do not interleave.
    public func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        write(bytes: bytes)
    }

    /// Writes `utf8Line` and a newline with one `write(2)`.
    public func write(utf8Line: [UInt8]) {
        var bytes = utf8Line
        bytes.append(UInt8(ascii: "\n"))
        write(bytes: bytes)
    }

    /// Writes `bytes` whole, retrying short and interrupted (`EINTR`) writes. On any other error the
    /// rest is dropped silently: logging never fails its caller.
    public func write(bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }  // interrupted by a signal: try again
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

/// Keeps every line in memory: tests read them back (for example to prove no secret was logged).
public final class MemoryLogSink: LogSink {
    private let storage = Mutex<[String]>([])

    /// An empty sink.
    public init() {}

    /// Appends `line` (no newline) under a lock.
    public func write(line: String) { storage.withLock { $0.append(line) } }

    /// Every line written so far, in order.
    public var lines: [String] { storage.withLock { $0 } }
}

/// Discards everything (quiet benchmarks).
public struct DiscardingLogSink: LogSink {
    /// A sink that keeps nothing.
    public init() {}
    /// Drops `line`.
    public func write(line: String) {}
}

/// Gathers lines and writes them in batches: `intervalMillis` after the first line of a batch, or
/// at once when `maxBufferedBytes` are waiting, and on `flush()`.
///
/// `serve` writes one line per request; a `write(2)` each cost ~5% of a proxied request's CPU.
/// A crash loses at most the last interval's lines. The flush is scheduled by the line that finds
/// the buffer empty, not by a repeating timer: a server with nothing to log (thousands of held,
/// silent streams) is not woken ten times a second to write nothing.
public final class BufferedLogSink: LogSink {
    private struct Pending {
        var bytes: [UInt8] = []
        /// A flush is scheduled on `queue` and has not yet taken the bytes.
        var flushScheduled = false
    }

    private let target: FileDescriptorLogSink
    private let maxBufferedBytes: Int
    private let intervalMillis: Int
    private let buffer = Mutex(Pending())
    private let queue = DispatchQueue(label: "keyward.log")
    /// The scheduled flush's weak way back to the sink, so a pending flush does not keep it alive.
    private let handle = Box()

    /// Lines still buffered are written when the sink is released;
    /// a process that exits without releasing it should call `flush()` first (`serve` does).
    /// - Parameters:
    ///   - target: where batches go (standard error by default).
    ///   - intervalMillis: the longest a line waits, milliseconds.
    ///   - maxBufferedBytes: a batch this large (bytes, newlines included) is written at once.
    public init(target: FileDescriptorLogSink = FileDescriptorLogSink(), intervalMillis: Int = 100, maxBufferedBytes: Int = 64 * 1024) {
        self.target = target
        self.maxBufferedBytes = maxBufferedBytes
        self.intervalMillis = max(1, intervalMillis)
        handle.sink = self
    }

    deinit {
        flush()
    }

    /// Buffers `line` and a newline; writes the batch on this thread when it reaches `maxBufferedBytes`.
    public func write(line: String) { append(line.utf8) }

    /// Buffers `utf8Line` and a newline, as ``write(line:)`` does, without making a `String` of it.
    public func write(utf8Line: [UInt8]) { append(utf8Line) }

    private func append(_ line: some Collection<UInt8>) {
        let (full, schedule) = buffer.withLock { pending -> ([UInt8]?, Bool) in
            pending.bytes.append(contentsOf: line)
            pending.bytes.append(UInt8(ascii: "\n"))
            let schedule = !pending.flushScheduled
            pending.flushScheduled = true
            guard pending.bytes.count >= maxBufferedBytes else { return (nil, schedule) }
            defer { pending.bytes.removeAll(keepingCapacity: true) }
            return (pending.bytes, schedule)
        }
        if let full { target.write(bytes: full) }
        if schedule {
            // Never blocks: Dispatch queues the work item and returns.
            let handle = self.handle
            queue.asyncAfter(deadline: .now() + .milliseconds(intervalMillis)) { handle.sink?.flush() }
        }
    }

    /// Writes whatever is waiting.
    public func flush() {
        let pending = buffer.withLock { pending -> [UInt8] in
            pending.flushScheduled = false
            defer { pending.bytes.removeAll(keepingCapacity: true) }
            return pending.bytes
        }
        if !pending.isEmpty { target.write(bytes: pending) }
    }

    /// A weak way back from the timer to the sink, so the sink can be released.
    private final class Box: @unchecked Sendable {
        weak var sink: BufferedLogSink?
    }
}
