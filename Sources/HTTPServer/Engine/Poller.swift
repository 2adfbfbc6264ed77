import CShims
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One epoll set (the listener and the connections of one loop thread) plus an eventfd that any
/// thread signals to wake the thread waiting on the set; or, shared, registrations in an external
/// loop's own set, whose thread waits and hands the readiness over (``deliver(tokens:events:_:)``).
///
/// Level-triggered: a descriptor stays ready until its bytes are read or its buffer drains, so a
/// loop that handles part of what is ready loses nothing. Registration calls are thread-safe
/// (the kernel's), `wait` is for the one loop thread.
///
/// Shared: every token is registered with the set's tag bit added (so the external loop tells the
/// server's entries from its own) and reported without it; there is no eventfd (the external
/// loop's wake is the wake-up) and `wait` is used only by the server's last pass as it stops.
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
    /// The eventfd; -1 for a shared set.
    private let wakeDescriptor: Int32
    /// Added to every token registered (0 for an own set); a shared set's entries without it are
    /// the external loop's and never reach the server.
    private let tag: UInt64
    /// Calls of `epoll_wait` on the set so far; any thread may read it.
    let waits = Atomic<Int>(0)
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
        tag = 0
    }

    /// Registrations in an external loop's epoll set `descriptor` (not closed here: its owner
    /// closes it), every token with `tag` added; `tag` is a single bit no token of the server's
    /// reaches (bit 63).
    init(sharing descriptor: Int32, tag: UInt64) {
        precondition(tag != 0 && tag & (tag - 1) == 0, "the tag is one bit")
        self.descriptor = descriptor
        wakeDescriptor = -1
        self.tag = tag
    }

    /// Whether the set is an external loop's (``init(sharing:tag:)``).
    var isShared: Bool { tag != 0 }

    deinit {
        guard !isShared else { return }
        close(wakeDescriptor)
        close(descriptor)
    }

    /// Watches `fd` for `interest` (`KW_POLL_*` bits); its readiness comes back with `token`
    /// (anything but ``wakeToken``). - Returns: false when the kernel refused (errno set).
    @discardableResult
    func add(_ fd: Int32, interest: UInt32, token: UInt64) -> Bool {
        precondition(token != Self.wakeToken, "the wake token is the poller's own")
        return kw_server_epoll_ctl(descriptor, 1, fd, interest, token | tag) == 0
    }

    /// Replaces what `fd` is watched for. - Returns: false when the kernel refused (errno set).
    @discardableResult
    func modify(_ fd: Int32, interest: UInt32, token: UInt64) -> Bool {
        kw_server_epoll_ctl(descriptor, 3, fd, interest, token | tag) == 0
    }

    /// Stops watching `fd` (before it is closed, so a reused number is never mistaken for it).
    func remove(_ fd: Int32) {
        _ = kw_server_epoll_ctl(descriptor, 2, fd, 0, 0)
    }

    /// Wakes the thread in ``wait(timeoutMilliseconds:_:)`` (or makes its next call return at
    /// once). Any thread; never blocks: a counter already signalled stays signalled. Does
    /// nothing for a shared set, whose loop is woken by its own means.
    func wake() {
        if wakeDescriptor >= 0 { kw_eventfd_signal(wakeDescriptor) }
    }

    /// Waits up to `timeoutMilliseconds` (0 = do not wait, -1 = no limit) and hands each ready
    /// descriptor to `handle`. Loop thread only.
    /// - Returns: whether ``wake()`` was called since the last wait (the eventfd is reset).
    @discardableResult
    func wait(timeoutMilliseconds: Int32, _ handle: (Readiness) -> Void) -> Bool {
        waits.add(1, ordering: .relaxed)
        let count = Int(kw_server_epoll_wait(descriptor, &tokens, &events, Int32(tokens.count), timeoutMilliseconds))
        var woken = false
        for index in 0..<max(0, count) {
            if isShared {
                // The external loop's own entries (untagged) are not the server's.
                if tokens[index] & tag != 0 { handle(Readiness(token: tokens[index] & ~tag, events: events[index])) }
            } else if tokens[index] == Self.wakeToken {
                kw_eventfd_drain(wakeDescriptor)
                woken = true
            } else {
                handle(Readiness(token: tokens[index], events: events[index]))
            }
        }
        return woken
    }

    /// Hands each entry of a shared set's readiness, as the external loop's wait reported it
    /// (`tokens[i]` with the tag, `events[i]` the ready bits), to `handle`, tag removed; entries
    /// without the tag are skipped. No system call. Loop thread only.
    func deliver(tokens: UnsafeBufferPointer<UInt64>, events: UnsafeBufferPointer<UInt32>, _ handle: (Readiness) -> Void) {
        for index in 0..<min(tokens.count, events.count) where tokens[index] & tag != 0 {
            handle(Readiness(token: tokens[index] & ~tag, events: events[index]))
        }
    }
}
