import Foundation
import Synchronization

/// Where JSON log lines go. One `write` per line, so concurrent lines never interleave.
public protocol LogSink: Sendable {
    /// Writes one complete line (without its trailing newline).
    func write(line: String)
}

/// Writes lines to a file descriptor (standard error by default) with one `write(2)` each.
public struct FileDescriptorLogSink: LogSink {
    let descriptor: Int32

    public init(descriptor: Int32 = STDERR_FILENO) { self.descriptor = descriptor }

    public func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

/// Keeps every line in memory: tests read them back (for example to prove no secret was logged).
public final class MemoryLogSink: LogSink {
    private let storage = Mutex<[String]>([])

    public init() {}

    public func write(line: String) { storage.withLock { $0.append(line) } }

    /// Every line written so far, in order.
    public var lines: [String] { storage.withLock { $0 } }
}

/// Discards everything (quiet benchmarks).
public struct DiscardingLogSink: LogSink {
    public init() {}
    public func write(line: String) {}
}
