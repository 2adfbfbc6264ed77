import CShims
import Dispatch
import KeywardSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keyward's own HTTP/1.1 server engine behind an ``HTTPServer``: a non-blocking listener, and
/// ``EngineLoop``s that own the connections (`threads` of them, each on a thread of its own and
/// all watching the one listener; or one, run by an external loop).
///
/// Thread rules: the configuration and callbacks are immutable; the counters are atomics; the
/// per-address connection counts are under a lock taken only at accept and close.
final class EngineServer: @unchecked Sendable {
    let configuration: HTTPServerConfiguration
    let bodyLimit: @Sendable (HTTPRequestHead) -> Int
    let onRefusal: (@Sendable (HTTPRequestRefusal) -> Void)?
    let handler: HTTPServer.Handler
    let externalLoop: HTTPServer.ExternalLoop?
    /// Requests between their head and the end of their answer.
    let activeRequests = Atomic<Int>(0)
    /// Exchanges whose connection waits on the application: an answer not given yet, or a
    /// stream with nothing queued. They hold no timer; only the client leaving ends them early.
    let waitingExchanges = Atomic<Int>(0)
    /// Client connections open on all loops.
    let openConnections = Atomic<Int>(0)
    /// Times a loop filled its share of the connection limit and stopped accepting.
    let connectionLimitReached = Atomic<Int>(0)
    let closesConnections = Atomic<Bool>(false)
    let quiesced = Atomic<Bool>(false)
    let stopping = Atomic<Bool>(false)
    private let perAddress = Locked([String: Int]())
    /// The listening socket; -1 until started.
    private(set) var listener: Int32 = -1
    /// The bound port while running; 0 before and after.
    let boundPort = Atomic<Int>(0)
    private var loops: [EngineLoop] = []
    private var threads: [pthread_t] = []
    /// Held while the external loop runs a turn, so ``stop()`` never closes connections under it.
    private let turnLock = Locked(false)
    private let lifecycle = Locked(0)  // 0 idle, 1 running, 2 stopped

    init(
        configuration: HTTPServerConfiguration,
        bodyLimit: @escaping @Sendable (HTTPRequestHead) -> Int,
        onRefusal: (@Sendable (HTTPRequestRefusal) -> Void)?,
        externalLoop: HTTPServer.ExternalLoop?,
        handler: @escaping HTTPServer.Handler
    ) {
        self.configuration = configuration
        self.bodyLimit = bodyLimit
        self.onRefusal = onRefusal
        self.externalLoop = externalLoop
        self.handler = handler
    }

    deinit {
        // The shared set's descriptor was handed over to the server (a duplicate of the loop's).
        if let shared = externalLoop?.sharedEventSet, shared.descriptor >= 0 { Glibc.close(shared.descriptor) }
    }

    /// Counts a new connection from `address`. - Returns: false over the per-address limit.
    func admit(_ address: String) -> Bool {
        let limit = configuration.perIPConnectionLimit
        return perAddress.withLock { counts -> Bool in
            let count = counts[address, default: 0]
            if limit > 0 && count >= limit { return false }
            counts[address] = count + 1
            return true
        }
    }

    /// A connection from `address` closed.
    func release(_ address: String) {
        perAddress.withLock { counts in
            let count = counts[address, default: 0] - 1
            counts[address] = count > 0 ? count : nil
        }
    }

    /// Binds `address` (with SO_REUSEPORT for an external-loop server, so its siblings can join
    /// it), listens, and starts the loops. - Throws: `startFailed`, `notStartable`.
    func start(at address: SocketAddress, port requested: UInt16) throws(HTTPServerError) {
        try lifecycle.withLock { (state: inout Int) throws(HTTPServerError) in
            guard state == 0 else { throw .notStartable }
            let fd = address.withSockaddr { sockaddr -> Int32 in
                let family = Int32(sockaddr.pointee.sa_family)
                let fd = socket(family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
                guard fd >= 0 else { return -1 }
                var one: Int32 = 1
                _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
                if externalLoop != nil {
                    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
                }
                if family == AF_INET6 {
                    _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
                }
                let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
                guard bind(fd, sockaddr, length) == 0, Glibc.listen(fd, Int32(configuration.listenBacklog)) == 0 else {
                    Glibc.close(fd)
                    return -1
                }
                return fd
            }
            guard fd >= 0 else { throw .startFailed(host: configuration.host, port: requested) }
            listener = fd
            boundPort.store(Int(Self.boundPort(fd)), ordering: .releasing)
            let count = externalLoop == nil ? configuration.threads : 1
            for _ in 0..<count {
                let shared = externalLoop?.sharedEventSet
                guard shared.map({ $0.descriptor >= 0 }) ?? true,
                      let loop = EngineLoop(server: self, connectionLimit: configuration.connectionLimit / count, shared: shared)
                else {
                    Glibc.close(fd)
                    listener = -1
                    throw .startFailed(host: configuration.host, port: requested)
                }
                loops.append(loop)
            }
            for loop in loops { loop.listen() }
            if externalLoop == nil {
                for (index, loop) in loops.enumerated() { threads.append(Self.spawn(loop: loop, server: self, index: index)) }
            }
            state = 1
        }
    }

    private static func boundPort(_ fd: Int32) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard found == 0 else { return 0 }
        return withUnsafeBytes(of: storage) { raw in
            // sin_port and sin6_port sit at the same offset, after the family.
            UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self))
        }
    }

    private final class ThreadStart {
        let loop: EngineLoop
        let server: EngineServer
        let name: String
        init(loop: EngineLoop, server: EngineServer, name: String) {
            self.loop = loop
            self.server = server
            self.name = name
        }
    }

    /// Starts the thread that runs `loop` until the server stops; named `kw-http-N` for the OS.
    private static func spawn(loop: EngineLoop, server: EngineServer, index: Int) -> pthread_t {
        let start = Unmanaged.passRetained(ThreadStart(loop: loop, server: server, name: "kw-http-\(index)")).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            let start = Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue()
            nameCurrentThread(start.name)
            while !start.server.stopping.load(ordering: .acquiring) {
                start.loop.turn(timeoutMilliseconds: Int32(clamping: start.loop.millisecondsUntilTurn ?? 1000))
            }
            start.loop.finish()
            return nil
        }, start)
        precondition(created == 0, "no thread for the HTTP server")
        return thread
    }

    var isRunning: Bool { lifecycle.withLock { $0 == 1 } }

    // MARK: The external loop's contract

    var eventDescriptor: Int32 {
        guard externalLoop != nil, isRunning, let loop = loops.first, !loop.poller.isShared else { return -1 }
        return loop.poller.descriptor
    }

    func runOnce(descriptorReady: Bool) {
        guard externalLoop != nil else { return }
        turnLock.withLock { _ in
            guard !stopping.load(ordering: .acquiring), let loop = loops.first else { return }
            if loop.poller.isShared {
                loop.turn(ready: UnsafeBufferPointer(start: nil, count: 0), events: UnsafeBufferPointer(start: nil, count: 0))
            } else {
                loop.turn(timeoutMilliseconds: 0, poll: descriptorReady)
            }
        }
    }

    func runOnce(ready tokens: UnsafeBufferPointer<UInt64>, events: UnsafeBufferPointer<UInt32>) {
        guard externalLoop != nil else { return }
        turnLock.withLock { _ in
            guard !stopping.load(ordering: .acquiring), let loop = loops.first else { return }
            if loop.poller.isShared {
                loop.turn(ready: tokens, events: events)
            } else {
                loop.turn(timeoutMilliseconds: 0, poll: !tokens.isEmpty)
            }
        }
    }

    /// `epoll_wait` calls the loops made on their own sets so far (see ``HTTPServer/ownWaits``).
    var ownWaits: Int {
        lifecycle.withLock { _ in loops.reduce(0) { $0 + $1.poller.waits.load(ordering: .relaxed) } }
    }

    var millisecondsUntilRun: Int64? {
        guard externalLoop != nil, !stopping.load(ordering: .acquiring), isRunning, let loop = loops.first else { return nil }
        return loop.millisecondsUntilTurn
    }

    // MARK: Draining and stopping

    func quiesce() -> Bool {
        guard isRunning else { return false }
        if !quiesced.exchange(true, ordering: .acquiringAndReleasing) {
            for loop in loops { loop.stopListening() }
        }
        return true
    }

    func closeQuiescedListener() {
        guard isRunning, quiesced.load(ordering: .relaxed), listener >= 0 else { return }
        _ = shutdown(listener, Int32(SHUT_RDWR))
    }

    func stop() {
        let wasRunning = lifecycle.withLock { state -> Bool in
            defer { state = 2 }
            return state == 1
        }
        guard wasRunning else { return }
        stopping.store(true, ordering: .releasing)
        if externalLoop == nil {
            for loop in loops { loop.poller.wake() }
            for thread in threads { pthread_join(thread, nil) }
        } else {
            turnLock.withLock { _ in loops.first?.finish() }
        }
        Glibc.close(listener)
        boundPort.store(0, ordering: .releasing)
    }
}
