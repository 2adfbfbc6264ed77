import Foundation

/// The device's attestation service, as Apple's `DCAppAttestService` offers it: the client drives
/// Keyward's handshake and per-request signing through this protocol only, so tests put a
/// simulated device behind it. Implementations throw ``AttestationServiceError``.
public protocol AppAttestationService: Sendable {
    /// Whether this device can attest at all (false: the client throws ``KeywardError/unsupportedDevice``).
    var isSupported: Bool { get }
    /// Makes a new hardware key and returns its id: standard base64 of SHA-256(public key), the
    /// exact string sent as `key_id` (never encode it again).
    func generateKey() async throws -> String
    /// The attestation object (CBOR, as Apple returns it) of `keyID` over `clientDataHash` (32 bytes).
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data
    /// An assertion (CBOR `{signature, authenticatorData}`) by `keyID` over `clientDataHash`
    /// (32 bytes); each one moves the key's counter forward by one.
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data
}

/// Where the client keeps the id of its attested key between launches.
public protocol KeyIDStore: Sendable {
    /// The stored key id, or nil on first run. Throws when the store cannot be read.
    func loadKeyID() throws -> String?
    /// Stores `keyID` (replacing any earlier one). Throws when the store cannot be written.
    func saveKeyID(_ keyID: String) throws
    /// Forgets the stored key id (the key became invalid). Throws when the store cannot be written.
    func deleteKeyID() throws
}

/// A key id kept in memory only: every launch attests anew. For tests and previews.
public final class InMemoryKeyIDStore: KeyIDStore, @unchecked Sendable {
    private let lock = NSLock()
    private var keyID: String?

    /// - Parameter keyID: a key id to start with (a "later run"), or nil (a first run).
    public init(keyID: String? = nil) { self.keyID = keyID }

    /// The key id held, or nil.
    public func loadKeyID() -> String? { lock.criticalSection { keyID } }
    /// Holds `keyID`.
    public func saveKeyID(_ keyID: String) { lock.criticalSection { self.keyID = keyID } }
    /// Forgets the key id.
    public func deleteKeyID() { lock.criticalSection { keyID = nil } }
}
