// ThreadSanitizer stress for HTTPServer, compiled by bench/httpserver-tsan.sh (not part of the package).
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// TSan stress: late answers, streams written from other threads, clients leaving, stop with streams open.
// Run twice: the server's own loop threads, then an external loop (one thread running the
// server through runOnce, as each of Keyward's shards does) woken by late answers.
let handler: HTTPServer.Handler = { head, body, writer in
    switch head.path {
    case "/late":
        Thread.detachNewThread {
            usleep(UInt32.random(in: 0...2000))
            writer.respond(status: 200, body: body)
        }
    case "/stream":
        let stream = writer.startStream(status: 200)
        stream.onClose = { _ = stream.bufferedBytes }
        Thread.detachNewThread {
            for i in 0..<20 {
                if !stream.write(Array("chunk \(i)\n".utf8)) { usleep(1000) }
                usleep(UInt32.random(in: 0...500))
            }
            stream.finish()
        }
    case "/idle":
        let stream = writer.startStream(status: 200)
        stream.write(Array("x".utf8))
        writer.onClose = { }
        Thread.detachNewThread { sleep(10); stream.finish() }
    default:
        writer.respond(status: 200, body: Array("ok".utf8))
    }
}

/// The external loop: poll(2) over the server's descriptor and a wake pipe, as the contract asks.
final class StressLoop: @unchecked Sendable {
    let wake: [Int32]
    let running = NSLock()
    nonisolated(unsafe) var stopRequested = false
    let finished = DispatchSemaphore(value: 0)
    init() {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0)
        for fd in fds { _ = fcntl(fd, F_SETFL, O_NONBLOCK) }
        wake = fds
    }
    func poke() { var byte: UInt8 = 1; _ = write(wake[1], &byte, 1) }
    var shouldStop: Bool { running.withLock { stopRequested } }
    func stop() { running.withLock { stopRequested = true }; poke(); finished.wait() }
    func run(_ server: HTTPServer) {
        let descriptor = server.eventDescriptor
        var drain = [UInt8](repeating: 0, count: 64)
        while !shouldStop {
            var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 2, Int32(min(server.millisecondsUntilRun ?? 1000, 1000)))
            while read(wake[0], &drain, drain.count) > 0 {}
            server.runOnce()
        }
        finished.signal()
    }
}

for external in [false, true] {
    let loop = StressLoop()
    let server = HTTPServer(
        configuration: HTTPServerConfiguration(threads: 2), bodyLimit: { _ in 1 << 20 },
        externalLoop: external ? HTTPServer.ExternalLoop(wake: { loop.poke() }) : nil, handler: handler)
    try server.start()
    if external { Thread.detachNewThread { loop.run(server) } }
    stress(server, port: server.port)
    if external {
        // Keyward's order: the loop stops first, then the server it ran.
        server.quiesce()
        server.waitUntilIdle(deadline: .now() + .milliseconds(300))
        loop.stop()
        server.stop()
    } else {
        server.drain(gracePeriodMilliseconds: 300)   // quiesce, wait, then stop with streams still open
    }
    print("stress done (\(external ? "external loop" : "worker threads"))")
}

func connectClient(_ port: UInt16) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    return fd
}
func sendText(_ fd: Int32, _ text: String) { _ = Array(text.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
func readSome(_ fd: Int32) -> Int { var buf = [UInt8](repeating: 0, count: 4096); return buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } }

func stress(_ server: HTTPServer, port: UInt16) {
    let group = DispatchGroup()
    for t in 0..<8 {
        group.enter()
        Thread.detachNewThread {
            for i in 0..<40 {
                let fd = connectClient(port)
                let path = ["/late", "/stream", "/idle", "/"][(t + i) % 4]
                sendText(fd, "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
                _ = readSome(fd)
                if i % 3 == 0 { usleep(20000) }
                close(fd)   // often mid-stream
            }
            group.leave()
        }
    }
    group.wait()
    // Leave some streams open, then stop.
    var open: [Int32] = []
    for path in ["/idle", "/idle", "/stream", "/late"] {
        let fd = connectClient(port)
        sendText(fd, "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
        open.append(fd)
    }
    usleep(300000)
}
