import Sessions

/// One way a device proves itself and gets a session. Every handshake has the same five steps,
/// run in this order by ``run(body:record:challenges:grants:)``:
///
/// 1. `parse`: the JSON body and every field checked without I/O (`bad_request`);
/// 2. spend the challenge the body names (`challenge_invalid`), before any cryptography, so a
///    challenge buys exactly one verification attempt;
/// 3. `verify`: the platform's proof over that challenge (`attestation_invalid`, …); under
///    `[gate] mode` `monitor` or `off` a failed (or, `off`, a missing) proof is admitted by
///    ``ProofGate`` instead, and `register` records the device unattested;
/// 4. `register`: the device recorded or moved forward in the store (`forbidden` when revoked);
/// 5. grant a session for the device (``SessionGrants``), with what `grantExtras` adds (the
///    Android handshake's install credential).
protocol Handshake: Sendable {
    /// The body, parsed and checked.
    associatedtype Parsed
    /// What verification established.
    associatedtype Verified

    func parse(_ body: [UInt8], record: RequestRecord) throws(APIError) -> Parsed
    /// The base64url challenge the parsed body names.
    func challenge(of parsed: Parsed) -> String
    func verify(_ parsed: Parsed, challenge: [UInt8], record: RequestRecord) throws(APIError) -> Verified
    /// - Returns: the device to grant a session to.
    func register(_ verified: Verified, record: RequestRecord) throws(APIError) -> (deviceID: String, platform: SessionPlatform)
    /// JSON members (without braces) the session answer carries beside the token; empty for most.
    func grantExtras(deviceID: String, record: RequestRecord) throws(APIError) -> String
}

extension Handshake {
    func grantExtras(deviceID: String, record: RequestRecord) throws(APIError) -> String { "" }

    /// The five steps in order; the first to refuse throws and ends the request.
    /// - Returns: the session body, `{"token": …, "expires_at": …}`.
    func run(body: [UInt8], record: RequestRecord, challenges: Challenges, grants: SessionGrants) throws(APIError) -> String {
        let parsed = try parse(body, record: record)
        let challenge = try challenges.spend(self.challenge(of: parsed), record: record)
        let verified = try verify(parsed, challenge: challenge, record: record)
        let device = try register(verified, record: record)
        let extras = try grantExtras(deviceID: device.deviceID, record: record)
        return try grants.grant(deviceID: device.deviceID, platform: device.platform, record: record, extraFields: extras)
    }
}
