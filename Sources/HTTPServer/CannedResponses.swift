import CMicroHTTPD

/// The server's own error responses, built once at start and shared by every
/// connection (libmicrohttpd reference-counts responses).
///
/// Bodies are the API's `{"error":"<code>"}`; the refusals also carry
/// `Connection: close`, since the rest of the request is not read.
final class CannedResponses: @unchecked Sendable {
    let badRequest: OpaquePointer?
    let payloadTooLarge: OpaquePointer?
    let headTooLarge: OpaquePointer?
    let internalError: OpaquePointer?

    init() {
        badRequest = Self.make(code: "bad_request", close: true)
        payloadTooLarge = Self.make(code: "payload_too_large", close: true)
        headTooLarge = Self.make(code: "bad_request", close: true)
        internalError = Self.make(code: "internal_error", close: false)
    }

    deinit {
        for response in [badRequest, payloadTooLarge, headTooLarge, internalError] {
            if let response { MHD_destroy_response(response) }
        }
    }

    private static func make(code: String, close: Bool) -> OpaquePointer? {
        var body = Array("{\"error\":\"\(code)\"}".utf8)
        let response = body.withUnsafeMutableBytes { raw in
            MHD_create_response_from_buffer(raw.count, raw.baseAddress, .RESPMEM_MUST_COPY)
        }
        guard let response else { return nil }
        _ = MHD_add_response_header(response, "Content-Type", "application/json")
        // Keyward's own refusal, marked as such (the application's error answers carry it too).
        _ = MHD_add_response_header(response, "Keyward-Error", code)
        if close { _ = MHD_add_response_header(response, "Connection", "close") }
        return response
    }
}
