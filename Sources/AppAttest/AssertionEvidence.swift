import KeywardCrypto

/// One assertion, decoded once, with the compared values derived.
struct AssertionEvidence: Sendable {
    let object: AssertionObject
    /// SHA-256(authenticatorData ‖ clientDataHash): Apple assertion steps 1–2.
    let nonce: [UInt8]
    let publicKey: Result<ECPublicKey, AppAttestError>
    let storedCounter: UInt32
    let appID: String?

    init(assertion: [UInt8], publicKey: Result<ECPublicKey, AppAttestError>, clientDataHash: [UInt8],
         storedCounter: UInt32, appID: String?) throws(AppAttestError) {
        object = try AssertionObject(bytes: assertion)
        nonce = SHA256.hash(object.authenticatorData.bytes + clientDataHash)
        self.publicKey = publicKey
        self.storedCounter = storedCounter
        self.appID = appID
    }
}
