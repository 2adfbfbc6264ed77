import KeywardCrypto

/// Verifies App Attest attestations exactly as Apple lays out (Apple, "Validating apps that connect
/// to your server", "Verify the attestation", steps 1–9), for one team, its bundle ids and one
/// environment.
///
/// The attestation is decoded once (`AttestationObject`, certificates, derived values), then each
/// step runs as one named check (`AttestationChecks`). Safe to share between threads; keep one per
/// configuration so the chain verifier's memo of Apple's intermediate is reused.
public struct AttestationVerifier: Sendable {
    /// The one environment accepted: a production deployment never takes a development key.
    public let environment: AppAttestEnvironment
    let appIDs: AppIDSet
    let chainVerifier: X509ChainVerifier
    let intermediateCache = BoundedCache<X509Certificate>(capacity: 8)

    /// - Parameters:
    ///   - teamID: the Apple Developer Team ID, e.g. `6MURL8TA57`.
    ///   - bundleIDs: the accepted bundle ids; App ID = `teamID + "." + bundleID`.
    ///   - environment: the one environment accepted.
    ///   - trustedRoot: the anchor; Apple's pinned root unless code (tests, the simulator) passes another.
    public init(teamID: String, bundleIDs: [String], environment: AppAttestEnvironment,
                trustedRoot: X509Certificate = AppleAppAttestationRoot.certificate) {
        self.environment = environment
        self.appIDs = AppIDSet(teamID: teamID, bundleIDs: bundleIDs)
        self.chainVerifier = X509ChainVerifier(trustedRoot: trustedRoot)
    }

    /// Verifies one attestation.
    /// - Parameters:
    ///   - attestation: the attestation object bytes (CBOR, after base64).
    ///   - keyID: the key id the app sent, 32 bytes (base64-decoded).
    ///   - clientDataHash: the bytes the app passed to `attestKey` — for Keyward's handshake,
    ///     SHA-256(challenge bytes); any length is accepted (Apple's own sample uses raw bytes).
    ///   - time: the verification time, unix seconds; every certificate's validity is checked at it.
    /// - Returns: the attested key (public key, key id, counter 0, environment, receipt, App ID).
    /// - Throws: `AppAttestError` with the first failing step's reason slug.
    public func verify(attestation: [UInt8], keyID: [UInt8], clientDataHash: [UInt8], at time: Int64)
        throws(AppAttestError) -> AttestedKey
    {
        let evidence = try AttestationEvidence(attestation: attestation, keyID: keyID, clientDataHash: clientDataHash, at: time,
                                                intermediateCache: intermediateCache)
        for check in AttestationChecks.all {
            if let failure = check.run(self, evidence) { throw failure }
        }
        return try attestedKey(evidence)
    }

    /// Runs every step it can and reports each outcome (for `keyward inspect`). Decoding failures
    /// fail the `decode` step and leave the others not run.
    public func inspect(attestation: [UInt8], keyID: [UInt8], clientDataHash: [UInt8], at time: Int64) -> VerificationReport {
        let evidence: AttestationEvidence
        do {
            evidence = try AttestationEvidence(attestation: attestation, keyID: keyID, clientDataHash: clientDataHash, at: time,
                                                intermediateCache: intermediateCache)
        } catch {
            let steps = [VerificationReport.Step(name: "decode", source: "Apple attestation object", outcome: .failed(error))]
                + AttestationChecks.all.map { VerificationReport.Step(name: $0.name, source: $0.source, outcome: .notRun) }
            return VerificationReport(kind: "attestation", steps: steps)
        }
        let steps = [VerificationReport.Step(name: "decode", source: "Apple attestation object", outcome: .passed)]
            + AttestationChecks.all.map { check in
                let failure = check.run(self, evidence)
                return VerificationReport.Step(name: check.name, source: check.source, outcome: failure.map { .failed($0) } ?? .passed)
            }
        return VerificationReport(kind: "attestation", steps: steps)
    }

    /// The result once every check passed.
    private func attestedKey(_ evidence: AttestationEvidence) throws(AppAttestError) -> AttestedKey {
        guard case .success(let key) = evidence.leafKey,
            let appID = appIDs.appID(forRPIDHash: evidence.object.authenticatorData.rpIDHash)
        else { throw AppAttestError(.publicKeyUnsupported, "credential key unavailable") }  // unreachable after the checks
        return AttestedKey(publicKey: key.x962, keyID: evidence.keyID, counter: evidence.object.authenticatorData.counter,
                           environment: environment, receipt: evidence.object.receipt, appID: appID)
    }
}
