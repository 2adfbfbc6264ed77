/// Why ``HTTPServer/start()`` failed.
public enum HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// `host` is not a numeric IPv4 or IPv6 address.
    case invalidHost(String)
    /// A limit in the configuration is out of range (negative, zero threads…); the field's name.
    case invalidConfiguration(String)
    /// The address could not be bound or listened on (in use, no permission), or no loop could be made (descriptors).
    case startFailed(host: String, port: UInt16)
    /// `start()` called on a server that is running or was stopped.
    case notStartable

    /// A stable slug for logs and metrics.
    public var reason: String {
        switch self {
        case .invalidHost: "invalid_host"
        case .invalidConfiguration: "invalid_configuration"
        case .startFailed: "start_failed"
        case .notStartable: "not_startable"
        }
    }

    /// For people: names the host or field, never a secret.
    public var description: String {
        switch self {
        case .invalidHost(let host): "not a numeric IP address: \(host)"
        case .invalidConfiguration(let field): "configuration out of range: \(field)"
        case .startFailed(let host, let port):
            "could not listen on \(host.contains(":") ? "[\(host)]" : host):\(port) (in use, or not an address of this machine)"
        case .notStartable: "the server is running or was stopped"
        }
    }
}
