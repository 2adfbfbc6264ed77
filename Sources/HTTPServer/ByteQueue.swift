/// A FIFO of byte chunks: writes append whole arrays (no copy beyond the
/// caller's), reads copy out into libmicrohttpd's send buffer.
///
/// Not thread-safe: a ``RequestContext`` guards it with its lock.
struct ByteQueue {
    private var chunks: [[UInt8]] = []
    /// Index in `chunks` of the first chunk still holding unread bytes.
    private var head = 0
    /// Bytes already read from `chunks[head]`.
    private var offset = 0
    /// Unread bytes.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        chunks.append(bytes)
        count += bytes.count
    }

    /// Copies up to `capacity` bytes into `destination`, consuming them.
    /// - Returns: bytes copied (0 when empty).
    mutating func read(into destination: UnsafeMutableRawPointer, capacity: Int) -> Int {
        var copied = 0
        while copied < capacity, head < chunks.count {
            let taken = chunks[head].withUnsafeBytes { chunk -> Int in
                let take = min(chunk.count - offset, capacity - copied)
                if let base = chunk.baseAddress {
                    (destination + copied).copyMemory(from: base + offset, byteCount: take)
                }
                return take
            }
            copied += taken
            offset += taken
            if offset == chunks[head].count {
                head += 1
                offset = 0
            }
        }
        count -= copied
        compact()
        return copied
    }

    /// Drops every unread byte.
    mutating func removeAll() {
        chunks = []
        head = 0
        offset = 0
        count = 0
    }

    /// Releases consumed chunks so the array does not grow with the stream's length.
    private mutating func compact() {
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 16, head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }
}
