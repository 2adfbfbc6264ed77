/// Where the router sent a request: its `route` label in the access log and in
/// `keyward_requests_total`.
enum Route: String, Sendable {
    case challenge
    case attestIOS = "attest_ios"
    case assertIOS = "assert_ios"
    case attestAndroid = "attest_android"
    case refresh
    case healthz
    case readyz
    /// `GET /v1/usage`.
    case usage
    /// `/p/<provider>/…`.
    case proxy
    /// No route matched (404).
    case unknown
    /// The HTTP layer refused the request before routing (framing, head or body size).
    case refused

    /// The route of `path` (the request-target's path, without the query).
    init(path: String) {
        if path.hasPrefix("/p/") {
            self = .proxy
            return
        }
        switch path {
        case "/v1/challenge": self = .challenge
        case "/v1/attest/ios": self = .attestIOS
        case "/v1/assert/ios": self = .assertIOS
        case "/v1/attest/android": self = .attestAndroid
        case "/v1/refresh": self = .refresh
        case "/healthz": self = .healthz
        case "/readyz": self = .readyz
        case "/v1/usage": self = .usage
        default: self = .unknown
        }
    }
}
