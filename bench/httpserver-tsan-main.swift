// ThreadSanitizer stress for HTTPServer, compiled by bench/httpserver-tsan.sh (not part of the package).
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// TSan stress: late answers, streams written from other threads, clients leaving, stop with streams open.
let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 2), bodyLimit: { _ in 1 << 20 }) { head, body, writer in
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
try server.start()
let port = server.port

func connectClient() -> Int32 {
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

let group = DispatchGroup()
for t in 0..<8 {
    group.enter()
    Thread.detachNewThread {
        for i in 0..<40 {
            let fd = connectClient()
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
    let fd = connectClient()
    sendText(fd, "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
    open.append(fd)
}
usleep(300000)
server.drain(gracePeriodMilliseconds: 300)   // quiesce, wait, then stop with streams still open
print("stress done")
