import KeywardCrypto

/// One of Apple's assertion steps: nil when it holds, else the reason.
struct AssertionCheck: Sendable {
    let name: String
    let source: String
    let run: @Sendable (AssertionVerifier, AssertionEvidence) -> AppAttestError?
}

/// Apple, "Validating apps that connect to your server", "Verify the assertion", steps 3–5 (steps
/// 1–2 compute the nonce; step 6, the challenge inside clientData, is the caller's: Keyward spends
/// its challenge before calling).
enum AssertionChecks {
    static let all: [AssertionCheck] = [
        AssertionCheck(name: "signature", source: "Apple assertion steps 1-3", run: signature),
        AssertionCheck(name: "app_id", source: "Apple assertion step 4", run: appID),
        AssertionCheck(name: "counter", source: "Apple assertion step 5", run: counter),
    ]

    /// Step 3: the signature is ECDSA P-256 with SHA-256 over the nonce — the nonce is the message,
    /// so the digest the device signed is SHA-256(nonce).
    static func signature(_ verifier: AssertionVerifier, _ evidence: AssertionEvidence) -> AppAttestError? {
        switch evidence.publicKey {
        case .failure(let error):
            return error
        case .success(let key):
            return key.isValidSignature(der: evidence.object.signature, message: evidence.nonce)
                ? nil : AppAttestError(.signatureInvalid, "assertion signature does not verify over the nonce")
        }
    }

    /// Step 4: the RP ID hash is SHA-256 of the device's App ID (or, when none is given, of one configured App ID).
    static func appID(_ verifier: AssertionVerifier, _ evidence: AssertionEvidence) -> AppAttestError? {
        let rpIDHash = evidence.object.authenticatorData.rpIDHash
        guard let matched = verifier.appIDs.appID(forRPIDHash: rpIDHash) else {
            return AppAttestError(.appIDMismatch, "RP ID hash matches no configured App ID")
        }
        if let expected = evidence.appID, expected != matched {
            return AppAttestError(.appIDMismatch, "RP ID hash is not the device's App ID")
        }
        return nil
    }

    /// Step 5: the counter is strictly greater than the stored one (equal is a replay).
    static func counter(_ verifier: AssertionVerifier, _ evidence: AssertionEvidence) -> AppAttestError? {
        evidence.object.authenticatorData.counter > evidence.storedCounter
            ? nil : AppAttestError(.counterReplay, "counter is not greater than the stored counter")
    }
}
