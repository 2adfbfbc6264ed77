import KeywardCrypto

/// Verifies App Attest assertions (Apple, "Validating apps that connect to your server", "Verify
/// the assertion") for one team and its bundle ids. Safe to share between threads.
public struct AssertionVerifier: Sendable {
    let appIDs: AppIDSet
    /// Parsed device keys by their 65 bytes: importing a key costs OpenSSL 3.0 more than the signature check.
    let keyCache: BoundedCache<ECPublicKey>

    /// - Parameters:
    ///   - teamID: the Apple Developer Team ID.
    ///   - bundleIDs: the accepted bundle ids; App ID = `teamID + "." + bundleID`.
    ///   - keyCacheCapacity: how many parsed device keys to keep (0 disables the cache).
    public init(teamID: String, bundleIDs: [String], keyCacheCapacity: Int = 4096) {
        appIDs = AppIDSet(teamID: teamID, bundleIDs: bundleIDs)
        keyCache = BoundedCache(capacity: keyCacheCapacity)
    }

    /// Verifies one assertion and returns the new counter (store it with compare-and-set).
    /// - Parameters:
    ///   - assertion: the assertion bytes (CBOR, after base64).
    ///   - publicKey: the attested key, a 65-byte uncompressed X9.62 P-256 point.
    ///   - clientDataHash: SHA-256 of the clientData the app signed (any length is accepted).
    ///   - storedCounter: the counter stored for this key; the new one must be strictly greater.
    ///   - appID: the device's App ID from its attestation; nil accepts any configured App ID.
    /// - Throws: `AppAttestError` (`malformed_cbor`, `malformed_assertion`, `malformed_auth_data`,
    ///   `public_key_unsupported`, `signature_invalid`, `app_id_mismatch`, `counter_replay`).
    public func verify(assertion: [UInt8], publicKey: [UInt8], clientDataHash: [UInt8], storedCounter: UInt32,
                       appID: String?) throws(AppAttestError) -> UInt32
    {
        try run(AssertionEvidence(assertion: assertion, publicKey: parseKey(publicKey), clientDataHash: clientDataHash,
                                  storedCounter: storedCounter, appID: appID))
    }

    /// The same with the key already parsed, for callers that keep parsed keys (saves a key import per call).
    public func verify(assertion: [UInt8], publicKey: ECPublicKey, clientDataHash: [UInt8], storedCounter: UInt32,
                       appID: String?) throws(AppAttestError) -> UInt32
    {
        try run(AssertionEvidence(assertion: assertion, publicKey: .success(publicKey), clientDataHash: clientDataHash,
                                  storedCounter: storedCounter, appID: appID))
    }

    /// Apple's steps in order over decoded evidence; the first failure is thrown.
    private func run(_ evidence: AssertionEvidence) throws(AppAttestError) -> UInt32 {
        for check in AssertionChecks.all {
            if let failure = check.run(self, evidence) { throw failure }
        }
        return evidence.object.authenticatorData.counter
    }

    /// Runs every step and reports each outcome (for `keyward inspect`).
    public func inspect(assertion: [UInt8], publicKey: [UInt8], clientDataHash: [UInt8], storedCounter: UInt32,
                        appID: String?) -> VerificationReport
    {
        let decode = VerificationReport.Step.self
        let evidence: AssertionEvidence
        do {
            evidence = try AssertionEvidence(assertion: assertion, publicKey: parseKey(publicKey), clientDataHash: clientDataHash,
                                             storedCounter: storedCounter, appID: appID)
        } catch {
            return VerificationReport(kind: "assertion", steps: [decode.init(name: "decode", source: "Apple assertion object", outcome: .failed(error))]
                + AssertionChecks.all.map { decode.init(name: $0.name, source: $0.source, outcome: .notRun) })
        }
        return VerificationReport(kind: "assertion", steps: [decode.init(name: "decode", source: "Apple assertion object", outcome: .passed)]
            + AssertionChecks.all.map { check in
                decode.init(name: check.name, source: check.source, outcome: check.run(self, evidence).map { .failed($0) } ?? .passed)
            })
    }

    /// A 65-byte P-256 point as a key, or `public_key_unsupported`.
    func parseKey(_ x962: [UInt8]) -> Result<ECPublicKey, AppAttestError> {
        Result { () throws(AppAttestError) in
            try keyCache.value(for: x962) { () throws(AppAttestError) in
                guard x962.count == 65, let key = try? ECPublicKey(x962: x962), key.curve == .p256 else {
                    throw AppAttestError(.publicKeyUnsupported, "public key is not a 65-byte P-256 point")
                }
                return key
            }
        }
    }
}
