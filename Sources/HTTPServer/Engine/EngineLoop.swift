import CShims
import HTTP1Codec
import KeywardSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One thread's share of an engine server: its poller (the listener and its connections), the
/// connections it owns, the inbox other threads post exchange news to, and their timeouts.
///
/// Timeouts sit in a ``DeadlineHeap``: a turn looks only at the connections whose entry came due,
/// so thousands of connections waiting on their answers cost nothing. After a connection acts
/// (readiness, news from its exchange, accept) its deadline is placed again if it came nearer; a
/// deadline moved later by activity costs nothing until its old entry comes due and is re-read.
///
/// Every method not marked otherwise runs on the loop's thread: the server's own thread, or the
/// external loop's (``HTTPServer/ExternalLoop``), which calls ``turn(timeoutMilliseconds:poll:)``
/// (the server's set nested in the loop's) or ``turn(ready:events:)`` (the server's
/// registrations in the loop's own set, whose readiness the loop hands over).
final class EngineLoop: @unchecked Sendable {
    /// The longest silence while a refused body is read and dropped, milliseconds.
    static let discardIdleMilliseconds: Int64 = 2000
    static let listenerToken: UInt64 = 0

    unowned let server: EngineServer
    let poller: Poller
    /// The most connections this loop holds (its share of the server's limit).
    let connectionLimit: Int
    private var connections: [UInt64: EngineConnection] = [:]
    private var nextToken: UInt64 = 1
    private var listening = false
    /// The server's connection timeout, milliseconds (0 = none).
    private let timeoutMilliseconds: Int64
    /// Open connections by deadline (monotonic milliseconds), possibly earlier than the deadline
    /// now is: see the type's note.
    private var deadlines = DeadlineHeap()
    private let inbox = Locked([EngineConnection]())
    /// The thread that runs this loop (`pthread_self`), 0 before it first ran: a post from it needs
    /// no wake-up, since the loop looks at its inbox before it sleeps again.
    private let owner = Atomic<UInt>(0)
    private var dateSecond: Int64 = -1
    private var dateText = ""

    /// A loop over a set of its own, or over `shared` (an external loop's set, with its tag).
    init?(server: EngineServer, connectionLimit: Int, shared: HTTPServer.ExternalLoop.SharedEventSet? = nil) {
        guard let poller = shared.map({ Poller(sharing: $0.descriptor, tag: $0.tokenTag) }) ?? Poller() else { return nil }
        self.server = server
        self.poller = poller
        self.connectionLimit = max(1, connectionLimit)
        timeoutMilliseconds = Int64(server.configuration.connectionTimeoutSeconds) * 1000
    }

    /// Starts watching the listener (EPOLLEXCLUSIVE: one loop is woken per new connection).
    func listen() {
        guard !listening, !server.quiesced.load(ordering: .relaxed), server.listener >= 0 else { return }
        listening = poller.add(server.listener, interest: KW_POLL_IN | KW_POLL_EXCLUSIVE, token: Self.listenerToken)
    }

    /// Stops watching the listener. Any thread (epoll_ctl is).
    func stopListening() {
        poller.remove(server.listener)
        listening = false
    }

    /// Another thread (or this one) has news for `connection`'s exchange. Any thread; never blocks.
    /// Only the first post into an empty inbox from another thread wakes the loop (its eventfd,
    /// and the external loop's `wake`): from the loop's own thread, a handler answering at once
    /// or a libcurl callback of the same loop turn, the loop finds the inbox before it sleeps.
    func post(_ connection: EngineConnection) {
        let first = inbox.withLock { inbox -> Bool in
            inbox.append(connection)
            return inbox.count == 1
        }
        if first && owner.load(ordering: .relaxed) != UInt(pthread_self()) {
            poller.wake()
            server.externalLoop?.wake()
        }
    }

    /// Whether news is waiting in the inbox.
    var hasPosts: Bool { inbox.withLock { !$0.isEmpty } }

    /// One pass: waits up to `timeoutMilliseconds` for readiness, handles it, then the inbox and
    /// the timeouts that came due. With `poll` false the poller is not asked at all (no system
    /// call): for an outer loop whose own wait just reported the poller's descriptor not readable,
    /// since the set is level-triggered and anything that became ready since keeps the descriptor
    /// readable for that loop's next wait.
    func turn(timeoutMilliseconds: Int32, poll: Bool = true) {
        owner.store(UInt(pthread_self()), ordering: .relaxed)
        // The clock is read when the wait ends, not before it: activity is stamped with the time it
        // happened, however long the wait slept.
        var woken: Int64?
        if poll {
            poller.wait(timeoutMilliseconds: hasPosts ? 0 : timeoutMilliseconds) { readiness in
                handle(readiness, woken: &woken)
            }
        }
        finishTurn(woken: woken)
    }

    /// One pass over readiness the external loop's wait reported in its own set (the server's
    /// entries: tokens with the tag, their EPOLL* bits; empty for a pass for the inbox and the
    /// timeouts only), then the inbox and the timeouts that came due, as
    /// ``turn(timeoutMilliseconds:poll:)`` does after its wait. No wait, no system call of its own.
    func turn(ready tokens: UnsafeBufferPointer<UInt64>, events: UnsafeBufferPointer<UInt32>) {
        owner.store(UInt(pthread_self()), ordering: .relaxed)
        var woken: Int64?
        poller.deliver(tokens: tokens, events: events) { readiness in
            handle(readiness, woken: &woken)
        }
        finishTurn(woken: woken)
    }

    /// Accepts on the listener's readiness, or hands a connection its own; `woken` is the turn's
    /// clock, read at the first readiness.
    private func handle(_ readiness: Poller.Readiness, woken: inout Int64?) {
        let now = woken ?? Self.monotonicMilliseconds()
        woken = now
        if readiness.token == Self.listenerToken {
            accept(now: now)
        } else if let connection = connections[readiness.token] {
            connection.handle(readiness, now: now)
            deadlineMayHaveComeNearer(connection)
        }
    }

    /// The rest of a turn after its readiness: the inbox, then the timeouts that came due.
    private func finishTurn(woken: Int64?) {
        let now = woken ?? Self.monotonicMilliseconds()
        let posted = inbox.withLock { inbox -> [EngineConnection] in
            defer { inbox.removeAll(keepingCapacity: true) }
            return inbox
        }
        for connection in posted where !connection.closed {
            connection.serviceExchange(now: now)
            deadlineMayHaveComeNearer(connection)
        }
        expireDeadlines(now: now)
    }

    /// Milliseconds until ``turn(timeoutMilliseconds:)`` must run even if nothing becomes ready:
    /// 0 with news waiting, else until the earliest connection deadline; nil = none.
    var millisecondsUntilTurn: Int64? {
        if hasPosts { return 0 }
        guard let earliest = deadlines.earliest?.atTime else { return nil }
        return max(0, earliest - Self.monotonicMilliseconds())
    }

    private func accept(now: Int64) {
        while connections.count < connectionLimit, !server.quiesced.load(ordering: .relaxed) {
            var storage = sockaddr_storage()
            var length = UInt32(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    kw_server_accept(server.listener, $0, &length)
                }
            }
            guard fd >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let address = withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress.numericHost($0) }
            }
            guard server.admit(address) else {
                Glibc.close(fd)
                continue
            }
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let token = nextToken
            nextToken += 1
            let connection = EngineConnection(fd: fd, token: token, loop: self, remoteAddress: address, now: now)
            guard connection.register() else {
                server.release(address)
                Glibc.close(fd)
                continue
            }
            connections[token] = connection
            server.openConnections.add(1, ordering: .relaxed)
            deadlineMayHaveComeNearer(connection)
        }
        if connections.count >= connectionLimit && listening {
            // Further connections wait in the listen backlog until one of ours closes.
            stopListening()
            server.connectionLimitReached.add(1, ordering: .relaxed)
        }
    }

    /// Called by a connection as it closes.
    func connectionClosed(_ connection: EngineConnection) {
        guard connections.removeValue(forKey: connection.token) != nil else { return }
        deadlines.remove(connection)
        server.openConnections.subtract(1, ordering: .relaxed)
        server.release(connection.remoteAddress)
        if !listening && connections.count < connectionLimit && !server.stopping.load(ordering: .relaxed) { listen() }
    }

    /// Places `connection`'s deadline in the heap if it is nearer than its entry there (or it has
    /// none). Every change of a connection's state happens while the loop has it in hand (its
    /// readiness, its exchange's news, its accept), and the loop calls this right after.
    private func deadlineMayHaveComeNearer(_ connection: EngineConnection) {
        guard !connection.closed, let deadline = connection.deadline(timeoutMilliseconds: timeoutMilliseconds) else { return }
        deadlines.schedule(connection, noLaterThan: deadline)
    }

    /// Closes the connections whose deadline is at or before `now`. An entry that comes due is
    /// checked against the connection's deadline as it is now: one that moved later goes back in at
    /// that time; one that no longer runs (waiting for its answer) stays out until it comes back.
    private func expireDeadlines(now: Int64) {
        while let due = deadlines.popEarliest(atOrBefore: now) {
            let connection = unsafeDowncast(due.member, to: EngineConnection.self)  // only EngineConnections are entered
            guard !connection.closed, let deadline = connection.deadline(timeoutMilliseconds: timeoutMilliseconds) else { continue }
            if deadline <= now {
                connection.close()
            } else {
                deadlines.schedule(connection, at: deadline)
            }
        }
    }

    /// The loop's last pass as the server stops: no more accepts; answers already given go out as
    /// far as the sockets take them without waiting (an answer the stopping application gave just
    /// before, such as a 503 for a call it cut, still reaches its client); then every connection
    /// closes (their exchanges' `onClose` fire).
    func finish() {
        stopListening()
        turn(timeoutMilliseconds: 0)
        closeAll()
    }

    /// Closes every connection (their exchanges' `onClose` fire) and stops listening.
    func closeAll() {
        stopListening()
        for connection in Array(connections.values) { connection.close() }
        _ = inbox.withLock { inbox in inbox.removeAll() }
    }

    /// The `Date` field's value for now (RFC 9110 §6.6.1), formatted once a second.
    func currentDate() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        if Int64(now.tv_sec) != dateSecond {
            dateSecond = Int64(now.tv_sec)
            dateText = HTTPDate.imfFixdate(secondsSince1970: dateSecond)
        }
        return dateText
    }

    static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
