import Foundation
import Synchronization

/// A TCP relay on 127.0.0.1 that holds every chunk it forwards for a fixed delay, in each
/// direction: a store "5 ms away" on one host. One thread accepts; each connection gets two
/// pump threads (client → target, target → client) that read a chunk, wait `delayMillis`, and
/// write it on. A request and its answer therefore cost at least two delays per round trip.
final class DelayRelay: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// The port the relay listens on (127.0.0.1).
    let port: UInt16
    private let listener: Int32
    private let targetPort: UInt16
    private let delayMicros: UInt32
    /// Every descriptor a pump uses, so `stop()` can shut them all.
    private let open = Mutex<Set<Int32>>([])
    private let stopped = Atomic<Bool>(false)
    private let acceptEnded = DispatchSemaphore(value: 0)

    /// Listens on a free loopback port and relays each connection to 127.0.0.1:`targetPort`.
    /// - Throws: `Failure` when the listening socket cannot be made.
    init(targetPort: UInt16, delayMillis: UInt32) throws {
        self.targetPort = targetPort
        delayMicros = delayMillis * 1_000
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw Failure(description: "socket() failed") }
        var address = DelayRelay.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic -> Int32 in
                guard bind(listener, generic, length) == 0, listen(listener, 128) == 0 else { return -1 }
                return getsockname(listener, generic, &length)
            }
        }
        guard bound == 0 else { close(listener); throw Failure(description: "bind/listen failed: errno \(errno)") }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Stops accepting and cuts every relayed connection.
    func stop() {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(listener, Int32(SHUT_RDWR))   // wakes the blocked accept()
        _ = acceptEnded.wait(timeout: .now() + 5)
        close(listener)
        for descriptor in open.withLock({ $0 }) { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        defer { acceptEnded.signal() }
        while !stopped.load(ordering: .sequentiallyConsistent) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let target = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = DelayRelay.loopback(port: targetPort)
            let connected = target >= 0 && withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(target, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
            guard connected else {
                close(client)
                if target >= 0 { close(target) }
                continue
            }
            for descriptor in [client, target] {
                var one: Int32 = 1
                setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            open.withLock { $0.formUnion([client, target]) }
            // Each side is closed by the pump that reads it, once both pumps have ended.
            let remaining = Atomic<Int>(2)
            let finish: @Sendable () -> Void = { [self] in
                guard remaining.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 else { return }
                open.withLock { $0.subtract([client, target]) }
                close(client)
                close(target)
            }
            Thread.detachNewThread { [self] in pump(from: client, to: target); finish() }
            Thread.detachNewThread { [self] in pump(from: target, to: client); finish() }
        }
    }

    /// Forwards chunks from `source` to `destination`, each after the delay (the delay is the
    /// behaviour this relay exists for), until either side ends; then half-closes both.
    private func pump(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        outer: while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            usleep(delayMicros)  // the added round-trip delay: the behaviour under test
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { write(destination, $0.baseAddress?.advanced(by: sent), count - sent) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { break outer }
                sent += written
            }
        }
        shutdown(destination, Int32(SHUT_WR))
        shutdown(source, Int32(SHUT_RD))
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }
}
