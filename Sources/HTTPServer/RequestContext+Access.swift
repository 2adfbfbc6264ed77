import CMicroHTTPD
import CShims
#if canImport(Glibc)
import Glibc
import HTTPFields
#endif

/// The access-handler state machine: head checks, bounded body, handler, delivery.
extension RequestContext {
    func access(
        method: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?,
        uploadData: UnsafePointer<CChar>?,
        uploadDataSize: UnsafeMutablePointer<Int>
    ) -> MHD_Result {
        if answeredDirectly { return .NO }
        switch phase {
        case .head:
            leaveHeadRegistry()
            return acceptHead(method: method, version: version)
        case .body:
            let size = uploadDataSize.pointee
            if size > 0 {
                uploadDataSize.pointee = 0
                return appendBody(uploadData, size)
            }
            phase = .handled
            runHandler()
            return queueOrWait()
        case .handled:
            return queueOrWait()
        case .refused:
            uploadDataSize.pointee = 0
            return .YES
        case .draining:
            // The body's bytes are dropped as they come; once the last has, the connection closes
            // with nothing unread, so the client's stack never sees a reset before the 413.
            let size = uploadDataSize.pointee
            uploadDataSize.pointee = 0
            return size > 0 ? .YES : .NO
        }
    }

    /// First call: the head is complete. Checks it, decides the body limit, and
    /// refuses early. Queueing on this first call makes libmicrohttpd skip the
    /// body and close the connection after the response, which is what a refusal wants.
    private func acceptHead(method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?) -> MHD_Result {
        let remoteAddress = SocketAddress.numericHost(keyward_mhd_client_address(connection))
        let methodText = method.map { String(cString: $0) } ?? ""
        let httpVersion: HTTPVersion = version.map { strcmp($0, "HTTP/1.0") == 0 } == true ? .http10 : .http11

        var collector = HeadCollector()
        withUnsafeMutablePointer(to: &collector) { pointer in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, headerIterator, pointer)
        }

        // Request line + header section (RFC 9112 §2.1), as received: libmicrohttpd's own count
        // includes the whitespace it trimmed from values (a field padded with 30 KiB of spaces is
        // 30 KiB), less the blank line ending the head. The rebuilt estimate is the fallback.
        let received = keyward_mhd_header_size(connection)
        let headBytes = received > 2
            ? received - 2
            : methodText.utf8.count + target.utf8.count + 12 + collector.headerBytes
        // libmicrohttpd answers a Content-Length it cannot parse itself, before this call; whatever
        // is refused then goes straight onto the socket, so that its page never follows ours.
        let direct = collector.libraryQueuedAnError
        if headBytes > core.configuration.maxHeaderBytes {
            return refuse(status: 431, code: "bad_request", reason: "head_too_large",
                          response: core.canned.headTooLarge, from: remoteAddress, direct: direct)
        }
        if collector.headers.count > core.configuration.maxHeaderFields {
            return refuse(status: 431, code: "bad_request", reason: "too_many_fields",
                          response: core.canned.headTooLarge, from: remoteAddress, direct: direct)
        }
        // Folded lines, NULs and lines read as the end of the head: bytes the fields do not cover.
        if let layoutError = HeadLayout.check(method: method, version: version, headSize: received, fields: collector.spans) {
            return refuse(.badRequest(layoutError.rawValue, from: remoteAddress), response: core.canned.badRequest, direct: direct)
        }
        if !Self.isValidTarget(target) {
            return refuse(.badRequest("invalid_target", from: remoteAddress), response: core.canned.badRequest, direct: direct)
        }
        // RFC 9110 §9.1: the method is a token.
        var methodBytes = methodText
        if !methodBytes.withUTF8({ HTTPBytes.isToken(UnsafeRawBufferPointer($0)) }) {
            return refuse(.badRequest("invalid_method", from: remoteAddress), response: core.canned.badRequest, direct: direct)
        }
        let framing: HTTPRequestHead.BodyFraming
        switch collector.framing(version: httpVersion) {
        case .success(let value):
            framing = value
        case .failure(let error):
            return refuse(.badRequest(error.rawValue, from: remoteAddress), response: core.canned.badRequest, direct: direct)
        }

        let head = HTTPRequestHead(
            method: methodText, target: target, version: httpVersion,
            headers: collector.headers, remoteAddress: remoteAddress, bodyFraming: framing)
        bodyLimit = max(0, core.bodyLimit(head))
        if case .contentLength(let length) = framing {
            if length > bodyLimit {
                // A client waiting for `100 Continue` gets the 413 in its place and sends no body.
                if length <= Self.drainedBodyBytes, head.header("expect") == nil {
                    return refuseThenDrain(HTTPRequestRefusal(
                        status: 413, code: "payload_too_large", reason: "content_length_over_limit", remoteAddress: remoteAddress))
                }
                return refuse(status: 413, code: "payload_too_large", reason: "content_length_over_limit",
                              response: core.canned.payloadTooLarge, from: remoteAddress)
            }
            body.reserveCapacity(length)
        }
        self.head = head
        phase = .body
        return .YES
    }

    /// One body fragment (already de-chunked by libmicrohttpd).
    private func appendBody(_ data: UnsafePointer<CChar>?, _ size: Int) -> MHD_Result {
        guard body.count + size <= bodyLimit else {
            // Only a chunked body can get here: a Content-Length over the limit was refused at the head.
            // libmicrohttpd 0.9.75 cannot queue a response while the body is being read, so the
            // 413 goes straight onto the socket and MHD_NO closes the connection.
            phase = .refused
            body = []
            core.onRefusal?(HTTPRequestRefusal(
                status: 413, code: "payload_too_large", reason: "chunked_body_over_limit",
                remoteAddress: head?.remoteAddress ?? "unknown"))
            _ = Self.payloadTooLargeBody.withUnsafeBytes { raw in
                keyward_mhd_send_final_response(
                    connection, 413, "Content Too Large", "application/json", "payload_too_large", raw.baseAddress, raw.count)
            }
            return .NO
        }
        if let data {
            body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size))
        }
        return .YES
    }

    private func runHandler() {
        guard let head else { return }
        let requestBody = body
        body = []
        core.handler(head, requestBody, ResponseWriter(context: self))
    }

    /// Queues the response if it is ready, else waits suspended for it.
    private func queueOrWait() -> MHD_Result {
        switch takeResponseOrSuspend() {
        case .queue(let response):
            if response.owned, core.closesConnections.load(ordering: .relaxed),
               MHD_get_response_header(response.pointer, "Connection") == nil {
                _ = MHD_add_response_header(response.pointer, "Connection", "close")
            }
            let result = MHD_queue_response(connection, response.status, response.pointer)
            response.release()
            return result
        case .wait:
            return .YES
        case .close:
            return .NO
        }
    }

    private func refuse(
        status: Int, code: String, reason: String, response: OpaquePointer?, from address: String, direct: Bool = false
    ) -> MHD_Result {
        refuse(HTTPRequestRefusal(status: status, code: code, reason: reason, remoteAddress: address),
               response: response, direct: direct)
    }

    /// Answers the refusal and closes. `direct`: libmicrohttpd has an answer of its own queued, so
    /// ours is written onto the socket and MHD_NO makes it close the connection without sending its own.
    private func refuse(_ refusal: HTTPRequestRefusal, response: OpaquePointer?, direct: Bool = false) -> MHD_Result {
        phase = .refused
        body = []
        core.onRefusal?(refusal)
        if direct {
            let text = Array("{\"error\":\"\(refusal.code)\"}".utf8)
            _ = text.withUnsafeBytes { raw in
                keyward_mhd_send_final_response(
                    connection, UInt32(refusal.status), Self.reasonPhrase(refusal.status), "application/json",
                    refusal.code, raw.baseAddress, raw.count)
            }
            return .NO
        }
        guard let response else { return .NO }
        return MHD_queue_response(connection, UInt32(refusal.status), response)
    }

    /// The most body bytes read and dropped after a 413 for a declared length over the limit
    /// (8 MiB); a longer declared body gets its 413 and the connection closes at once.
    static let drainedBodyBytes = 8 << 20
    /// The longest silence while a refused body is drained, seconds; then the connection closes.
    static let drainIdleSeconds: UInt32 = 2

    /// A 413 for a `Content-Length` over the limit, answered before any body byte is read: written
    /// onto the socket, which is then shut for sending (``RequestContext/Phase/draining``). The
    /// declared body is then read and dropped, so a client that sends its whole body before it
    /// reads (most do, without `Expect: 100-continue`) finishes its upload and reads the 413: a
    /// close with unread bytes would answer its upload with a reset instead (RFC 9112 §9.6: a
    /// server closes in stages). A client that stops sending is closed after `drainIdleSeconds`.
    private func refuseThenDrain(_ refusal: HTTPRequestRefusal) -> MHD_Result {
        core.onRefusal?(refusal)
        phase = .draining
        body = []
        let sent = Self.payloadTooLargeBody.withUnsafeBytes { raw in
            keyward_mhd_send_final_response(
                connection, 413, Self.reasonPhrase(413), "application/json", refusal.code, raw.baseAddress, raw.count)
        }
        guard sent == 0 else { return .NO }
        _ = keyward_mhd_set_connection_timeout(connection, Self.drainIdleSeconds)
        return .YES
    }

    /// The RFC 9110 §15 reason phrase of the statuses the server refuses with.
    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 413: "Content Too Large"
        case 431: "Request Header Fields Too Large"
        default: "Bad Request"
        }
    }

    /// A refusal libmicrohttpd is about to send its own page for (see ``LengthRefusal``): one JSON
    /// answer straight onto the socket, which is then shut for sending, so that its page fails to go out.
    /// - Parameters: `status`: 400 or 431; `reason`: the slug for the log.
    func answerLibraryRefusal(status: Int, reason: String) {
        guard !answeredDirectly, phase == .head else { return }
        answeredDirectly = true
        phase = .refused
        let remoteAddress = SocketAddress.numericHost(keyward_mhd_client_address(connection))
        core.onRefusal?(HTTPRequestRefusal(status: status, code: "bad_request", reason: reason, remoteAddress: remoteAddress))
        _ = Self.badRequestBody.withUnsafeBytes { raw in
            keyward_mhd_send_final_response(
                connection, UInt32(status), Self.reasonPhrase(status), "application/json", "bad_request", raw.baseAddress, raw.count)
        }
    }

    static let badRequestBody = Array(#"{"error":"bad_request"}"#.utf8)

    static let payloadTooLargeBody = Array(#"{"error":"payload_too_large"}"#.utf8)

    /// RFC 9112 §3.2: a request-target has no whitespace or control characters, and no fragment
    /// (`#` is in neither origin-form nor absolute-form; libcurl would cut a forwarded URL there,
    /// query parameters added after it included).
    static func isValidTarget(_ target: String) -> Bool {
        guard !target.isEmpty else { return false }
        for byte in target.utf8 where byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "#") {
            return false
        }
        return true
    }
}

/// `MHD_KeyValueIteratorN` over request headers; `cls` is a ``HeadCollector``.
private let headerIterator: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
    guard let cls else { return .NO }
    let collector = cls.assumingMemoryBound(to: HeadCollector.self)
    collector.pointee.add(
        name: UnsafeRawBufferPointer(start: key, count: key == nil ? 0 : keySize),
        value: UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueSize))
    return .YES
}
