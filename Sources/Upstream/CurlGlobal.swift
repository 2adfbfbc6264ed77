import CCurl

/// `curl_global_init`, exactly once per process, before the first handle is made.
/// libcurl 7.88 here is built thread-safe (`curl --version` lists "threadsafe"), so a lazy static —
/// initialised once under Swift's own once-guard — is enough (https://curl.se/libcurl/c/curl_global_init.html).
enum CurlGlobal {
    /// True when initialisation succeeded; evaluated on first use.
    static let isInitialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
}
