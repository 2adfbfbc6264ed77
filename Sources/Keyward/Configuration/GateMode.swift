/// `[gate] mode` of keyward.toml: what a handshake whose proof does not verify gets.
///
/// The staged rollout goes `off` → `monitor` → `enforce` (README, "Spend control"). In every mode
/// the challenge is required and spent, malformed bodies are refused, revoked devices stay refused,
/// and a provider with `require_attested = true` refuses unattested sessions.
public enum GateMode: String, Sendable, Equatable, CaseIterable {
    /// A proof that fails verification is refused, a missing one too (the default).
    case enforce
    /// Proofs are verified; one that fails still gets a session, for a device recorded
    /// `attested = false` with the failure's reason slug, and is logged and counted as `would_block`.
    case monitor
    /// As `monitor`, and a handshake may also come with no proof at all (reason `proof_missing`).
    case off

    /// Whether a failed proof still gets a (unattested) session.
    var admitsFailedProofs: Bool { self != .enforce }
    /// Whether a handshake without any proof gets a (unattested) session.
    var admitsMissingProofs: Bool { self == .off }

    /// The warning `check-config` prints and `serve` logs when the gate is not enforcing, nil under `enforce`.
    public var warning: String? {
        switch self {
        case .enforce: nil
        case .monitor: "[gate] mode = \"monitor\": handshakes whose proof fails verification still get sessions (unattested devices); use it only to measure, then move to \"enforce\""
        case .off: "[gate] mode = \"off\": handshakes without any proof get sessions (unattested devices); use it only during integration, then move to \"monitor\" and \"enforce\""
        }
    }
}
