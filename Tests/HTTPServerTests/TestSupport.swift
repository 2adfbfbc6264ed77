import Foundation
import HTTPServer
import XCTest

/// Collects values across threads in tests.
final class Box<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var _value: Value
    init(_ value: Value) { _value = value }
    var value: Value {
        get { lock.withLock { _value } }
        set { lock.withLock { _value = newValue } }
    }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&_value) } }
}

extension XCTestCase {
    /// Starts a server on an ephemeral loopback port, stopped at teardown.
    func startServer(
        configuration: HTTPServerConfiguration = HTTPServerConfiguration(threads: 2),
        bodyLimit: @escaping @Sendable (HTTPRequestHead) -> Int = { _ in 1024 },
        onRefusal: (@Sendable (HTTPRequestRefusal) -> Void)? = nil,
        handler: @escaping HTTPServer.Handler
    ) throws -> HTTPServer {
        let server = HTTPServer(configuration: configuration, bodyLimit: bodyLimit, onRefusal: onRefusal, handler: handler)
        try server.start()
        addTeardownBlock { server.stop() }
        XCTAssertNotEqual(server.port, 0)
        return server
    }
}

/// Runs `body` on a new thread (not the server's workers).
func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    Thread.detachNewThread(body)
}
