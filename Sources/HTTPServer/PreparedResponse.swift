import CMicroHTTPD
#if canImport(Glibc)
import Glibc
import HTTPFields
#endif

/// A libmicrohttpd response ready to queue, with its status.
///
/// `owned` responses were made for one request and are destroyed once queued
/// (or dropped); canned ones belong to ``CannedResponses``.
struct PreparedResponse: @unchecked Sendable {
    let pointer: OpaquePointer
    let status: UInt32
    let owned: Bool

    /// Drops this holder's reference (libmicrohttpd keeps its own while sending).
    func release() {
        if owned { MHD_destroy_response(pointer) }
    }

    /// Builds a fixed-length response; the body is copied once into libmicrohttpd.
    /// - Returns: nil when `status` is outside 200–599 (RFC 9110 §15: 1xx is never
    ///   final) or a header is unusable (a NUL, CR or LF would split or truncate it).
    static func make(status: Int, headers: [(String, String)], body: [UInt8]) -> PreparedResponse? {
        guard (200...599).contains(status) else { return nil }
        let pointer: OpaquePointer? = body.withUnsafeBytes { raw in
            MHD_create_response_from_buffer(
                raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let pointer else { return nil }
        let response = PreparedResponse(pointer: pointer, status: UInt32(status), owned: true)
        guard response.addHeaders(headers) else {
            response.release()
            return nil
        }
        return response
    }

    /// Adds header fields in order, skipping `Content-Length` and `Transfer-Encoding`:
    /// libmicrohttpd frames the body itself (RFC 9112 §6). It refuses CR/LF; a NUL
    /// would truncate the C string, so it is refused here.
    /// - Returns: false when a header was refused.
    func addHeaders(_ headers: [(String, String)]) -> Bool {
        for (name, value) in headers {
            if HTTPBytes.caseInsensitiveEquals(name, "content-length")
                || HTTPBytes.caseInsensitiveEquals(name, "transfer-encoding") {
                continue
            }
            // libmicrohttpd refuses an empty value; an empty field (legal, RFC 9110 §5.5) carries
            // nothing, so it is left out rather than failing the whole response.
            if value.isEmpty { continue }
            let added = name.withCString { cName in
                value.withCString { cValue in
                    // An embedded NUL would silently truncate the field: refuse it.
                    strlen(cName) == name.utf8.count && strlen(cValue) == value.utf8.count
                        && MHD_add_response_header(pointer, cName, cValue) == .YES
                }
            }
            guard added else { return false }
        }
        return true
    }
}
