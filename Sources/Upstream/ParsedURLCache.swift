import CCurl
import KeywardSupport

/// One URL as libcurl parsed it (`CURLU`, https://curl.se/libcurl/c/curl_url.html), to hand to
/// transfers through CURLOPT_CURLU instead of a string each of them parses again.
///
/// Shared read-only: libcurl 7.88 only reads an easy handle's CURLOPT_CURLU (it copies it with
/// `curl_url_dup` when the transfer connects and builds the URL text from it), so any number of
/// transfers may use one at once, each keeping it alive until its handle is reset. The URL may
/// carry a query-string key: it is never logged nor placed in an error.
final class ParsedURL: @unchecked Sendable {
    /// The exact text that was parsed.
    let text: String
    /// The parsed handle (CURLU *); freed when the last holder lets go.
    let handle: OpaquePointer

    /// Parses `text` as libcurl parses CURLOPT_URL for a handle with CURLOPT_PATH_AS_IS (the same
    /// flags: a scheme guessed when missing, any scheme accepted here and checked when the
    /// transfer starts, dot segments kept). Nil when libcurl refuses the URL or has no memory.
    init?(_ text: String) {
        guard let handle = curl_url() else { return nil }
        let flags = UInt32(CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME | CURLU_PATH_AS_IS)
        guard text.withCString({ curl_url_set(handle, CURLUPART_URL, $0, flags) }) == CURLUE_OK else {
            curl_url_cleanup(handle)
            return nil
        }
        self.text = text
        self.handle = handle
    }

    deinit { curl_url_cleanup(handle) }
}

/// The last few distinct URLs an upstream client was asked for, parsed: a proxy sends most of its
/// requests to a handful of endpoints, and a request to one of them then costs a string
/// comparison instead of libcurl's parse (`bench/instructions.sh`, bench/README.md). Exact text
/// only; a URL seen for the first time is parsed and takes the oldest slot. Any thread.
final class ParsedURLCache: Sendable {
    private struct Slots {
        var urls: [ParsedURL] = []
        /// The slot the next new URL replaces once every slot is taken.
        var oldest = 0
    }

    private let slots = Locked(Slots())
    private let capacity: Int

    /// - Parameter capacity: how many distinct URLs are kept (at least 1).
    init(capacity: Int = 16) {
        self.capacity = max(1, capacity)
    }

    /// The parsed form of `url`, from the cache or parsed now; nil when libcurl refuses it.
    func parsed(_ url: String) -> ParsedURL? {
        if let hit = slots.withLock({ slots in slots.urls.first { $0.text == url } }) { return hit }
        guard let parsed = ParsedURL(url) else { return nil }
        slots.withLock { slots in
            if slots.urls.count < capacity {
                slots.urls.append(parsed)
            } else {
                slots.urls[slots.oldest] = parsed
                slots.oldest = (slots.oldest + 1) % capacity
            }
        }
        return parsed
    }
}
