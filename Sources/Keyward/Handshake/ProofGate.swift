import Store

/// The gate of the handshakes (`[gate] mode`): what becomes of a proof that failed verification,
/// or of a handshake that brought none.
///
/// Under `enforce` both are refused as they always were. Under `monitor` a proof that failed
/// (`attestation_invalid`, whatever its reason) is admitted: the handshake goes on for a device
/// recorded `attested = false` with that reason slug, and one `gate_would_block` log line and one
/// `keyward_gate_would_block_total{route,reason}` count say what `enforce` would have refused.
/// Under `off` a missing proof is admitted the same way, with reason `proof_missing`. Any other
/// refusal (a malformed body, an unknown or spent challenge, a revoked device, the store or Google
/// failing) is never admitted.
struct ProofGate: Sendable {
    let mode: GateMode
    let logger: Logger
    let metrics: Metrics

    /// The reason slug of a handshake that brought no proof.
    static let proofMissing = "proof_missing"

    /// What the proof of a handshake came to.
    enum Outcome: Sendable, Equatable {
        /// Verified: the device is (or becomes) attested.
        case verified
        /// Not verified, admitted by the gate: the device is recorded unattested with this reason.
        case admitted(reason: String)
    }

    /// A proof that failed with `failure`: admitted (returns its reason) when the mode admits failed
    /// proofs and `failure` is a proof failure (`attestation_invalid`); else `failure` is thrown.
    func failedProof(_ failure: APIError, route: Route, record: RequestRecord) throws(APIError) -> String {
        guard mode.admitsFailedProofs, failure.code == .attestationInvalid else { throw failure }
        // Every verifier's slug is snake case; one that is not still gets a storable reason.
        let reason = DeviceRecord.isValidReason(failure.reason) ? failure.reason : APIErrorCode.attestationInvalid.rawValue
        wouldBlock(route: route, reason: reason, record: record)
        return reason
    }

    /// A handshake without a proof: admitted under `off` (returns `proof_missing`); else 400
    /// `bad_request` `proof_missing`, as a body missing its proof field always was.
    func missingProof(route: Route, record: RequestRecord) throws(APIError) -> String {
        guard mode.admitsMissingProofs else { throw APIError(.badRequest, reason: Self.proofMissing) }
        wouldBlock(route: route, reason: Self.proofMissing, record: record)
        return Self.proofMissing
    }

    /// The one log line and the count of a refusal `enforce` would have made. The device id is
    /// the request's (no proof material reaches the log).
    private func wouldBlock(route: Route, reason: String, record: RequestRecord) {
        metrics.increment("keyward_gate_would_block_total", ["route": route.rawValue, "reason": reason])
        var line = logger.line("gate_would_block")
        line.add("mode", mode.rawValue)
        line.add("route", route.rawValue)
        line.add("reason", reason)
        line.addIfPresent("device_id", record.snapshot.deviceID)
        logger.emit(line)
    }
}
