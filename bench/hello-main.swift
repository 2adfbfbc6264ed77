// A hello-world server on HTTPServer, compiled by bench/hello.sh (not part of the package).
#if canImport(Glibc)
import Glibc
#endif

let port = UInt16(CommandLine.arguments.dropFirst().first ?? "8089") ?? 8089
let body = Array("hello, world\n".utf8)
let server = HTTPServer(
    configuration: HTTPServerConfiguration(host: "127.0.0.1", port: port),
    bodyLimit: { _ in 0 }
) { _, _, writer in
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
