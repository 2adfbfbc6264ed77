#if canImport(Glibc)
import Glibc
#endif

/// The bytes a connection has to send, as the pieces they were handed over in (a response head,
/// chunk frames, the producer's own arrays), sent with one gathering `sendmsg` (writev's form that takes flags) so a head and its first body piece
/// leave in one system call and no piece is copied into a send buffer of ours.
///
/// Loop thread only.
struct OutputQueue {
    /// What one ``send(to:)`` left.
    enum SendResult: Equatable {
        /// Everything queued is sent.
        case drained
        /// The socket's send buffer is full: wait until it is writable, then send again.
        case wouldBlock
        /// The connection failed (the peer reset it, or it is closed): drop it.
        case failed
    }

    /// The most pieces handed to one `sendmsg` (Linux's IOV_MAX is 1024; a few dozen cover a burst).
    static let piecesPerCall = 64

    private var pieces: [[UInt8]] = []
    /// Index of the first piece not fully sent.
    private var head = 0
    /// Bytes of `pieces[head]` already sent.
    private var offset = 0
    /// Bytes queued and not yet sent.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Queues `piece` after everything queued.
    mutating func append(_ piece: [UInt8]) {
        guard !piece.isEmpty else { return }
        pieces.append(piece)
        count += piece.count
    }

    /// Sends as much as the socket (non-blocking) takes. A send to a peer that has gone fails with
    /// EPIPE rather than raising SIGPIPE (`MSG_NOSIGNAL`).
    mutating func send(to fd: Int32) -> SendResult {
        while count > 0 {
            let sent = writeSome(to: fd)
            if sent < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .failed
            }
            consume(sent)
        }
        return .drained
    }

    /// Drops everything queued (the connection is being cut).
    mutating func removeAll() {
        pieces = []
        head = 0
        offset = 0
        count = 0
    }

    private func writeSome(to fd: Int32) -> Int {
        let used = min(Self.piecesPerCall, pieces.count - head)
        return withUnsafeTemporaryAllocation(of: iovec.self, capacity: used) { vectors -> Int in
            // Each array is pinned only for the call: the base addresses are taken inside nested
            // `withUnsafeBytes` scopes, built up recursively over the pieces.
            func fill(_ index: Int) -> Int {
                if index == used {
                    var message = msghdr()
                    message.msg_iov = vectors.baseAddress
                    message.msg_iovlen = used
                    return sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
                }
                return pieces[head + index].withUnsafeBytes { raw -> Int in
                    let skip = index == 0 ? offset : 0
                    vectors[index] = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress! + skip), iov_len: raw.count - skip)
                    return fill(index + 1)
                }
            }
            return fill(0)
        }
    }

    private mutating func consume(_ sent: Int) {
        var left = sent
        count -= sent
        while left > 0 {
            let available = pieces[head].count - offset
            if left >= available {
                left -= available
                head += 1
                offset = 0
            } else {
                offset += left
                left = 0
            }
        }
        if head == pieces.count {
            pieces.removeAll(keepingCapacity: pieces.count <= Self.piecesPerCall)
            head = 0
        } else if head >= Self.piecesPerCall {
            pieces.removeFirst(head)
            head = 0
        }
    }
}
