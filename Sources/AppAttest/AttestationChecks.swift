import KeywardCrypto

/// One of Apple's attestation steps over decoded evidence: nil when it holds, else the reason.
struct AttestationCheck: Sendable {
    let name: String
    let source: String
    let run: @Sendable (AttestationVerifier, AttestationEvidence) -> AppAttestError?
}

/// Apple, "Validating apps that connect to your server", "Verify the attestation", steps 1–9, in order.
enum AttestationChecks {
    static let all: [AttestationCheck] = [
        AttestationCheck(name: "certificate_chain", source: "Apple attestation step 1", run: certificateChain),
        AttestationCheck(name: "nonce", source: "Apple attestation steps 2-4", run: nonce),
        AttestationCheck(name: "key_id", source: "Apple attestation step 5", run: keyID),
        AttestationCheck(name: "app_id", source: "Apple attestation step 6", run: appID),
        AttestationCheck(name: "counter", source: "Apple attestation step 7", run: counter),
        AttestationCheck(name: "aaguid", source: "Apple attestation step 8", run: aaguid),
        AttestationCheck(name: "credential_id", source: "Apple attestation step 9", run: credentialID),
    ]

    /// Step 1: x5c is exactly [credential certificate, intermediate], and it chains to the pinned root
    /// with every certificate (the root's included) valid at the verification time.
    static func certificateChain(_ verifier: AttestationVerifier, _ evidence: AttestationEvidence) -> AppAttestError? {
        guard evidence.intermediates.count == 1 else {
            return AppAttestError(.chainLengthInvalid, "x5c must hold exactly the credential and intermediate certificates")
        }
        do {
            try verifier.chainVerifier.verify(leaf: evidence.leaf, intermediates: evidence.intermediates, at: evidence.time)
            return nil
        } catch {
            switch error {
            case .expired: return AppAttestError(.certificateExpired, error.description)
            case .notYetValid: return AppAttestError(.certificateNotYetValid, error.description)
            case .malformed: return AppAttestError(.certificateMalformed, error.description)
            case .untrusted: return AppAttestError(.chainUntrusted, error.description)
            }
        }
    }

    /// Steps 2–4: the nonce SHA-256(authData ‖ clientDataHash) equals the one the credential
    /// certificate's extension 1.2.840.113635.100.8.2 certifies.
    static func nonce(_ verifier: AttestationVerifier, _ evidence: AttestationEvidence) -> AppAttestError? {
        switch evidence.certifiedNonce {
        case .failure(let error):
            return error
        case .success(let certified):
            return constantTimeEquals(certified, evidence.expectedNonce)
                ? nil : AppAttestError(.nonceMismatch, "certified nonce differs from SHA-256(authData ‖ clientDataHash)")
        }
    }

    /// Step 5: SHA-256 of the credential certificate's public key (the 65-byte X9.62 point) is the key id.
    static func keyID(_ verifier: AttestationVerifier, _ evidence: AttestationEvidence) -> AppAttestError? {
        switch evidence.leafKey {
        case .failure(let error):
            return error
        case .success(let key):
            return SHA256.hash(key.x962) == evidence.keyID
                ? nil : AppAttestError(.keyIDMismatch, "key id is not SHA-256 of the credential public key")
        }
    }

    /// Step 6: the RP ID hash is SHA-256 of one of the configured App IDs.
    static func appID(_ verifier: AttestationVerifier, _ evidence: AttestationEvidence) -> AppAttestError? {
        verifier.appIDs.appID(forRPIDHash: evidence.object.authenticatorData.rpIDHash) != nil
            ? nil : AppAttestError(.appIDMismatch, "RP ID hash matches no configured App ID")
    }

    /// Step 7: the counter is 0.
    static func counter(_ verifier: AttestationVerifier, _ evidence: AttestationEvidence) -> AppAttestError? {
        evidence.object.authenticatorData.counter == 0
            ? nil : AppAttestError(.counterNotZero, "attestation counter is not 0")
    }

    /// Step 8: the AAGUID is the accepted environment's, byte for byte.
    static func aaguid(_ verifier: AttestationVerifier, _ evidence: AttestationEvidence) -> AppAttestError? {
        evidence.object.authenticatorData.attestedCredential?.aaguid == verifier.environment.aaguid
            ? nil : AppAttestError(.aaguidMismatch, "AAGUID is not the \(verifier.environment.rawValue) environment's")
    }

    /// Step 9: the credential id is the key id.
    static func credentialID(_ verifier: AttestationVerifier, _ evidence: AttestationEvidence) -> AppAttestError? {
        evidence.object.authenticatorData.attestedCredential?.credentialID == evidence.keyID
            ? nil : AppAttestError(.credentialIDMismatch, "credential id is not the key id")
    }
}
