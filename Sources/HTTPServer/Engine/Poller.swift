import CShims
#if canImport(Glibc)
import Glibc
#endif

/// One epoll set (the listener and the connections of one loop thread) plus an eventfd that any
/// thread signals to wake the thread waiting on the set.
///
/// Level-triggered: a descriptor stays ready until its bytes are read or its buffer drains, so a
/// loop that handles part of what is ready loses nothing. Registration calls are thread-safe
/// (the kernel's), `wait` is for the one loop thread.
final class Poller: @unchecked Sendable {
    /// One ready descriptor: the token it was registered with and what it is ready for.
    struct Readiness: Equatable {
        /// The caller's token (`add`'s `token`).
        let token: UInt64
        /// `KW_POLL_*` bits.
        let events: UInt32

        /// Bytes (or end of file) to read.
        var isReadable: Bool { events & KW_POLL_IN != 0 }
        /// Room in the send buffer.
        var isWritable: Bool { events & KW_POLL_OUT != 0 }
        /// The peer closed its side or reset the connection, or the socket failed (RDHUP, HUP, ERR).
        var peerGone: Bool { events & (KW_POLL_RDHUP | KW_POLL_HUP | KW_POLL_ERR) != 0 }
    }

    /// The token `wait` never reports: it marks the eventfd, which `wait` drains itself.
    static let wakeToken = UInt64.max

    /// The epoll descriptor: readable while anything in the set is ready (an outer loop can watch it).
    let descriptor: Int32
    private let wakeDescriptor: Int32
    private var tokens = [UInt64](repeating: 0, count: 256)
    private var events = [UInt32](repeating: 0, count: 256)

    /// A new, empty set with its wake eventfd; nil when the kernel refuses either (descriptor limit).
    init?() {
        let epoll = kw_epoll_create()
        guard epoll >= 0 else { return nil }
        let wake = kw_eventfd()
        guard wake >= 0 else {
            close(epoll)
            return nil
        }
        guard kw_server_epoll_ctl(epoll, 1, wake, KW_POLL_IN, Self.wakeToken) == 0 else {
            close(wake)
            close(epoll)
            return nil
        }
        descriptor = epoll
        wakeDescriptor = wake
    }

    deinit {
        close(wakeDescriptor)
        close(descriptor)
    }

    /// Watches `fd` for `interest` (`KW_POLL_*` bits); its readiness comes back with `token`
    /// (anything but ``wakeToken``). - Returns: false when the kernel refused (errno set).
    @discardableResult
    func add(_ fd: Int32, interest: UInt32, token: UInt64) -> Bool {
        precondition(token != Self.wakeToken, "the wake token is the poller's own")
        return kw_server_epoll_ctl(descriptor, 1, fd, interest, token) == 0
    }

    /// Replaces what `fd` is watched for. - Returns: false when the kernel refused (errno set).
    @discardableResult
    func modify(_ fd: Int32, interest: UInt32, token: UInt64) -> Bool {
        kw_server_epoll_ctl(descriptor, 3, fd, interest, token) == 0
    }

    /// Stops watching `fd` (before it is closed, so a reused number is never mistaken for it).
    func remove(_ fd: Int32) {
        _ = kw_server_epoll_ctl(descriptor, 2, fd, 0, 0)
    }

    /// Wakes the thread in ``wait(timeoutMilliseconds:_:)`` (or makes its next call return at
    /// once). Any thread; never blocks: a counter already signalled stays signalled.
    func wake() {
        kw_eventfd_signal(wakeDescriptor)
    }

    /// Waits up to `timeoutMilliseconds` (0 = do not wait, -1 = no limit) and hands each ready
    /// descriptor to `handle`. Loop thread only.
    /// - Returns: whether ``wake()`` was called since the last wait (the eventfd is reset).
    @discardableResult
    func wait(timeoutMilliseconds: Int32, _ handle: (Readiness) -> Void) -> Bool {
        let count = Int(kw_server_epoll_wait(descriptor, &tokens, &events, Int32(tokens.count), timeoutMilliseconds))
        var woken = false
        for index in 0..<max(0, count) {
            if tokens[index] == Self.wakeToken {
                kw_eventfd_drain(wakeDescriptor)
                woken = true
            } else {
                handle(Readiness(token: tokens[index], events: events[index]))
            }
        }
        return woken
    }
}
