import CShims

/// The two ends of one TCP connection, numeric addresses as `inet_ntop` writes them and ports.
///
/// A connection's endpoints are unique among open connections, so they say for certain which
/// socket a transfer uses: libcurl reports them for each request to the pre-request callback
/// (CURLOPT_PREREQFUNCTION, new and reused connections alike), and `init?(socket:)` reads them
/// back from a socket (getpeername, getsockname).
struct ConnectionEndpoints: Hashable {
    var peerAddress: String
    var peerPort: Int
    var localAddress: String
    var localPort: Int

    init(peerAddress: String, peerPort: Int, localAddress: String, localPort: Int) {
        self.peerAddress = peerAddress
        self.peerPort = peerPort
        self.localAddress = localAddress
        self.localPort = localPort
    }

    /// The endpoints of a connected socket; nil when it has no peer (never connected, reset) or is
    /// neither IPv4 nor IPv6.
    init?(socket: Int32) {
        let size = Int(KW_ADDRESS_TEXT_SIZE)
        var peer = [CChar](repeating: 0, count: size), local = [CChar](repeating: 0, count: size)
        var peerPort: Int32 = 0, localPort: Int32 = 0
        guard kw_socket_endpoints(socket, &peer, &peerPort, &local, &localPort) == 0 else { return nil }
        self.init(
            peerAddress: String(decoding: peer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), peerPort: Int(peerPort),
            localAddress: String(decoding: local.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), localPort: Int(localPort))
    }
}
