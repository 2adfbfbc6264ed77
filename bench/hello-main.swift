// A hello-world server on HTTPServer, compiled by bench/hello.sh (not part of the package).
//   GET /            → 200 "hello, world\n"
//   GET /stream?mb=N → N MiB streamed in 64 KiB writes, paced by back-pressure (write/onWritable)
#if canImport(Glibc)
import Glibc
#endif
import Dispatch

let port = UInt16(CommandLine.arguments.dropFirst().first ?? "8089") ?? 8089
let body = Array("hello, world\n".utf8)
let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)

/// Writes `remaining` chunks, stopping whenever the stream's buffer is full and
/// continuing from `onWritable`.
final class Pump: @unchecked Sendable {
    let stream: ResponseStream
    var remaining: Int
    init(stream: ResponseStream, chunks: Int) { self.stream = stream; remaining = chunks }
    func run() {
        while remaining > 0 {
            remaining -= 1
            if !stream.write(chunk) { return }   // resumed by onWritable
        }
        stream.finish()
    }
}

let server = HTTPServer(
    configuration: HTTPServerConfiguration(host: "127.0.0.1", port: port),
    bodyLimit: { _ in 0 }
) { head, _, writer in
    if head.path == "/stream" {
        let mebibytes = head.query.flatMap { Int($0.dropFirst(3)) } ?? 100
        let stream = writer.startStream(status: 200, headers: [("Content-Type", "application/octet-stream")])
        let pump = Pump(stream: stream, chunks: mebibytes * 16)
        let queue = DispatchQueue(label: "pump")
        stream.onWritable = { queue.async { pump.run() } }
        queue.async { pump.run() }
        return
    }
    writer.respond(status: 200, headers: [("Content-Type", "text/plain")], body: body)
}
do {
    try server.start()
} catch {
    print("hello: \(error)")
    exit(1)
}
print("hello: listening on 127.0.0.1:\(server.port)")
while true { pause() }
