/// A connection's received bytes that the codec has not consumed yet, in one contiguous block.
///
/// Sized to need: no memory until the first receive, then ``initialCapacity`` bytes, doubled only
/// when the unconsumed bytes fill it (a head bigger than that), never past ``maxCapacity``.
/// ``releaseIfEmpty()`` gives the memory back while a keep-alive connection idles, so an idle
/// connection or a held stream keeps no read buffer at all. Consumed bytes are moved out of the
/// way only when room is needed, so the codec's offsets stay valid until the next receive.
///
/// Loop thread only (the connection that owns it).
final class ReadBuffer {
    /// Bytes allocated at the first receive, and again after each release: 4 KiB.
    static let initialCapacity = 4096

    /// The most bytes the buffer grows to: the longest head allowed plus its blank line and some
    /// of what follows it.
    let maxCapacity: Int
    private var storage: UnsafeMutableRawBufferPointer?
    private var start = 0
    private var end = 0

    /// - Parameter maxCapacity: bytes (≥ ``initialCapacity``).
    init(maxCapacity: Int) {
        self.maxCapacity = max(maxCapacity, Self.initialCapacity)
    }

    deinit {
        storage?.deallocate()
    }

    /// Bytes allocated now (0 after a release).
    var capacity: Int { storage?.count ?? 0 }

    /// The unconsumed bytes, oldest first; valid until the next mutating call.
    var unconsumed: UnsafeRawBufferPointer {
        guard let storage else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(rebasing: storage[start..<end])
    }

    /// Unconsumed bytes.
    var count: Int { end - start }

    /// Drops `bytes` from the front (what the codec said it consumed).
    func consume(_ bytes: Int) {
        precondition(bytes >= 0 && bytes <= count, "consumed more than was received")
        start += bytes
        if start == end {
            start = 0
            end = 0
        }
    }

    /// Room to receive into after the unconsumed bytes, made by moving them to the front and, when
    /// they fill the block, by doubling it (up to ``maxCapacity``).
    /// - Returns: the free space; empty when ``maxCapacity`` unconsumed bytes are held already.
    func spaceForReceive() -> UnsafeMutableRawBufferPointer {
        guard var block = storage else {
            let block = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.initialCapacity, alignment: 16)
            storage = block
            return block
        }
        if end == block.count && start > 0 {
            block.baseAddress!.copyMemory(from: block.baseAddress! + start, byteCount: end - start)
            end -= start
            start = 0
        }
        if end == block.count && block.count < maxCapacity {
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: min(block.count * 2, maxCapacity), alignment: 16)
            grown.baseAddress!.copyMemory(from: block.baseAddress! + start, byteCount: end - start)
            end -= start
            start = 0
            block.deallocate()
            block = grown
            storage = grown
        }
        return UnsafeMutableRawBufferPointer(rebasing: block[end...])
    }

    /// `bytes` were received into the space ``spaceForReceive()`` returned.
    func didReceive(_ bytes: Int) {
        precondition(bytes >= 0 && end + bytes <= capacity, "received past the space given")
        end += bytes
    }

    /// Frees the block when nothing unconsumed is left (a connection going idle); the next
    /// receive allocates ``initialCapacity`` again.
    func releaseIfEmpty() {
        guard count == 0, let block = storage else { return }
        block.deallocate()
        storage = nil
        start = 0
        end = 0
    }
}
