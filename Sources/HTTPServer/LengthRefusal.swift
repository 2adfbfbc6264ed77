import CMicroHTTPD
import CShims
import HTTPFields

/// libmicrohttpd 0.9.75 parses `Content-Length` itself once the head is in, before the first
/// access-handler call. A value it cannot read (`+5`, `5, 5`, `0x5`, more than 2^64 − 1) gets its
/// own HTML page, and a bug in that path sends the page's head twice, the first head's length
/// framing the second: the client sees garbage. No application callback runs for that request;
/// the library only logs the refusal, on the thread that runs the connection, before it sends.
///
/// So each thread keeps the requests whose head is still being read (`ThreadHeadRequests`), and
/// the log hook answers each of them whose first `Content-Length` libmicrohttpd cannot read (with
/// no `Transfer-Encoding`: it reads the length only then) straight on the socket with one JSON 400
/// and shuts the socket for sending. libmicrohttpd's page then fails to go out and it closes the
/// connection. A request the hook answers whose head was not yet complete is refused all the same
/// once it is (a later `Transfer-Encoding` beside the length is refused too): nothing is lost.
///
/// The `Cookie` field takes the same path: libmicrohttpd splits it into one pool record per pair
/// at the same point, and when they do not fit (a few hundred pairs) it queues its own 431 the same
/// way, head sent twice. The hook answers that one request (the one whose head is complete) with
/// one JSON 431, reason `cookie_too_large`.
enum LengthRefusal {
    /// Installs the log hook and the per-thread registry's release; once per process.
    static let installed: Void = {
        keyward_thread_local_set_release { opaque in
            guard let opaque else { return }
            Unmanaged<ThreadHeadRequests>.fromOpaque(opaque).release()
        }
        keyward_mhd_set_library_refusal_hook { what in
            guard let requests = ThreadHeadRequests.existing else { return }
            switch what {
            case Int32(KEYWARD_MHD_REFUSED_LENGTH):
                for context in requests.all where LengthRefusal.libraryRefusesLength(context.connection) {
                    context.answerLibraryRefusal(status: 400, reason: FramingError.invalidContentLength.rawValue)
                }
            case Int32(KEYWARD_MHD_REFUSED_POOL_EXHAUSTED):
                // Only the request whose head is complete: libmicrohttpd is splitting its `Cookie`
                // field, between the blank line and the first access-handler call, which follows at
                // once on this thread; every other request here is still reading its head.
                for context in requests.all where keyward_mhd_header_size(context.connection) > 0 {
                    context.answerLibraryRefusal(status: 431, reason: "cookie_too_large")
                }
            default:
                break
            }
        }
    }()

    /// Whether libmicrohttpd 0.9.75 refuses this head's length: no `Transfer-Encoding` and a first
    /// `Content-Length` that is not 1*DIGIT within 64 bits.
    static func libraryRefusesLength(_ connection: OpaquePointer) -> Bool {
        var scan = (sawTransferEncoding: false, firstLengthRefused: nil as Bool?)
        withUnsafeMutablePointer(to: &scan) { pointer in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, { cls, _, key, keySize, value, valueSize in
                guard let cls else { return .NO }
                let scan = cls.assumingMemoryBound(to: (sawTransferEncoding: Bool, firstLengthRefused: Bool?).self)
                let name = UnsafeRawBufferPointer(start: key, count: key == nil ? 0 : keySize)
                if HTTPBytes.caseInsensitiveEquals(name, HeadCollector.Names.transferEncoding) {
                    scan.pointee.sawTransferEncoding = true
                } else if scan.pointee.firstLengthRefused == nil, HTTPBytes.caseInsensitiveEquals(name, HeadCollector.Names.contentLength) {
                    let bytes = UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueSize)
                    scan.pointee.firstLengthRefused = !HeadCollector.isPlainUInt64(bytes)
                }
                return .YES
            }, pointer)
        }
        return !scan.sawTransferEncoding && scan.firstLengthRefused == true
    }
}

/// The requests of one libmicrohttpd thread whose head is still being read: from the URI-log
/// callback to the first access-handler call (or the end of the request). Only that thread
/// touches it, hence `@unchecked Sendable`; it lives in the thread's pointer and is released
/// when the thread exits.
final class ThreadHeadRequests: @unchecked Sendable {
    private var contexts: [ObjectIdentifier: Unmanaged<RequestContext>] = [:]

    /// This thread's registry, made on first use.
    static var current: ThreadHeadRequests {
        if let existing { return existing }
        _ = LengthRefusal.installed
        let made = ThreadHeadRequests()
        keyward_thread_local_set(Unmanaged.passRetained(made).toOpaque())
        return made
    }

    /// This thread's registry if it has one.
    static var existing: ThreadHeadRequests? {
        keyward_thread_local_get().map { Unmanaged<ThreadHeadRequests>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Unretained: a context leaves before libmicrohttpd releases it (request-completed callback).
    func insert(_ context: RequestContext) { contexts[ObjectIdentifier(context)] = Unmanaged.passUnretained(context) }

    func remove(_ context: RequestContext) { contexts.removeValue(forKey: ObjectIdentifier(context)) }

    var all: [RequestContext] { contexts.values.map { $0.takeUnretainedValue() } }
}
