import DeviceSimulator
import Foundation
import PlayIntegrity
import Synchronization

/// A ``PlayIntegrityHTTPClient`` that hands requests to the in-process fake Google, records them,
/// and can play "unreachable".
final class InMemoryGoogle: PlayIntegrityHTTPClient {
    struct Unreachable: Error {}

    static let baseURL = "http://fake-google.test"
    let fake: FakeGooglePlayIntegrity
    private let state = Mutex((requests: [PlayIntegrityHTTPRequest](), unreachable: false))

    init(now: Int64) {
        fake = FakeGooglePlayIntegrity(baseURL: Self.baseURL, now: now)
    }

    var requests: [PlayIntegrityHTTPRequest] { state.withLock { $0.requests } }

    func setUnreachable(_ unreachable: Bool) { state.withLock { $0.unreachable = unreachable } }

    func send(_ request: PlayIntegrityHTTPRequest) throws -> PlayIntegrityHTTPResponse {
        let unreachable = state.withLock { state in
            state.requests.append(request)
            return state.unreachable
        }
        if unreachable { throw Unreachable() }
        guard request.url.hasPrefix(Self.baseURL) else { throw Unreachable() }
        let response = fake.handle(method: request.method, path: String(request.url.dropFirst(Self.baseURL.count)), headers: request.headers, body: request.body)
        return PlayIntegrityHTTPResponse(status: response.status, body: response.body)
    }
}

/// The service-account key file as a provider would serve it; replaceable to simulate rotation.
final class KeyFileBox: Sendable {
    private let bytes: Mutex<[UInt8]?>

    init(_ bytes: [UInt8]?) { self.bytes = Mutex(bytes) }

    func set(_ new: [UInt8]?) { bytes.withLock { $0 = new } }

    struct Missing: Error {}

    func read() throws -> [UInt8] {
        guard let bytes = bytes.withLock({ $0 }) else { throw Missing() }
        return bytes
    }
}
