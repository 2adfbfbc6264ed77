import CCurl
import HTTPFields

/// Turns a request's header fields into libcurl's CURLOPT_HTTPHEADER lines.
///
/// libcurl sends custom lines in the order given, and replaces its own field when a line names it.
/// A line `Name:` (nothing after the colon) removes libcurl's own field without sending one, and
/// `Name;` sends the field with an empty value (https://curl.se/libcurl/c/CURLOPT_HTTPHEADER.html).
/// The lines suppress the defaults libcurl 7.88 would otherwise add: `Accept: */*` on every request,
/// `Expect: 100-continue` on large bodies, and `Content-Type: application/x-www-form-urlencoded`
/// on requests with a body. `Host` (required by RFC 9112 §3.2) and `Content-Length` are left to
/// libcurl when the request does not carry them.
///
/// The lines are C strings one after another in one buffer (each ends in NUL, which no line holds:
/// names are tokens and values are refused with NUL), and `makeList` turns them into libcurl's
/// list in one allocation.
struct RequestHeaderLines {
    /// Every line and its terminating NUL, in order.
    private var text: [UInt8] = []
    /// How many lines `text` holds.
    private(set) var count = 0

    /// - Parameters:
    ///   - headers: the request's fields, in order.
    ///   - hasContent: whether the request is sent with content framing (a body, or POST/PUT/PATCH).
    /// - Throws: `UpstreamError.invalidRequest` for a name that is not a token or a value with CR, LF or NUL.
    static func make(_ headers: [(String, String)], hasContent: Bool) throws(UpstreamError) -> RequestHeaderLines {
        var lines = RequestHeaderLines()
        // Each line is `name: value` and a NUL; the three suppressing lines take under 32 bytes.
        lines.text.reserveCapacity(headers.reduce(32) { $0 + $1.0.utf8.count + $1.1.utf8.count + 3 })
        var hasAccept = false, hasExpect = false, hasContentType = false
        for (name, value) in headers {
            guard HTTPBytes.isToken(name) else { throw .invalidRequest("header name is not a token") }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                throw .invalidRequest("header value contains CR, LF or NUL")
            }
            // Framing is set from the body.
            if HTTPBytes.equalsIgnoringCase(name, staticLowercased: "content-length")
                || HTTPBytes.equalsIgnoringCase(name, staticLowercased: "transfer-encoding") { continue }
            if HTTPBytes.equalsIgnoringCase(name, staticLowercased: "accept") { hasAccept = true }
            if HTTPBytes.equalsIgnoringCase(name, staticLowercased: "expect") { hasExpect = true }
            if HTTPBytes.equalsIgnoringCase(name, staticLowercased: "content-type") { hasContentType = true }
            if value.isEmpty {
                lines.appendLine(name, ";")
            } else {
                lines.appendLine(name, ": ", value)
            }
        }
        if !hasAccept { lines.appendLine("Accept:") }
        if !hasExpect { lines.appendLine("Expect:") }
        if hasContent && !hasContentType { lines.appendLine("Content-Type:") }
        return lines
    }

    /// Adds the line `start` `separator` `value` and its NUL.
    private mutating func appendLine(_ start: String, _ separator: StaticString = "", _ value: String = "") {
        var start = start, value = value
        start.withUTF8 { text.append(contentsOf: $0) }
        separator.withUTF8Buffer { text.append(contentsOf: $0) }
        value.withUTF8 { text.append(contentsOf: $0) }
        text.append(0)
        count += 1
    }

    /// The lines as a CURLOPT_HTTPHEADER list (`struct curl_slist`, a `data` C string and a `next`
    /// node each, the last `next` NULL) in one allocation: the nodes, then the lines they point
    /// into. libcurl reads such a list and never changes or frees it (it is the caller's to keep
    /// until the transfer is over, https://curl.se/libcurl/c/CURLOPT_HTTPHEADER.html), so a list
    /// not built by `curl_slist_append` serves alike, with one allocation per request instead of
    /// two per line. Free it with ``freeList(_:)``, never `curl_slist_free_all`. Nil when there
    /// are no lines.
    func makeList() -> UnsafeMutablePointer<curl_slist>? {
        guard count > 0 else { return nil }
        let nodeBytes = count * MemoryLayout<curl_slist>.stride
        let storage = UnsafeMutableRawPointer.allocate(
            byteCount: nodeBytes + text.count, alignment: MemoryLayout<curl_slist>.alignment)
        let nodes = storage.bindMemory(to: curl_slist.self, capacity: count)
        let characters = (storage + nodeBytes).bindMemory(to: CChar.self, capacity: text.count)
        text.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(characters).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
        var start = 0
        for index in 0..<count {
            let next = index + 1 < count ? nodes + index + 1 : nil
            (nodes + index).initialize(to: curl_slist(data: characters + start, next: next))
            while text[start] != 0 { start += 1 }
            start += 1
        }
        return nodes
    }

    /// Frees a list from ``makeList()``.
    static func freeList(_ list: UnsafeMutablePointer<curl_slist>) {
        UnsafeMutableRawPointer(list).deallocate()
    }
}
