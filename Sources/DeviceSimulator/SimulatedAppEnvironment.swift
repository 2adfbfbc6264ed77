/// The App Attest environment a simulated device's key is made in (it decides the AAGUID).
/// Mirrors `AppAttest.AppAttestEnvironment` without making the simulator depend on the verifier.
public enum SimulatedAppEnvironment: String, Sendable, CaseIterable {
    case production
    case development

    /// 16 bytes: `appattest` + seven 0x00 (production) or `appattestdevelop` (development).
    public var aaguid: [UInt8] {
        switch self {
        case .production: return Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        case .development: return Array("appattestdevelop".utf8)
        }
    }
}

extension SimulatedAppEnvironment {
    /// The environment as an App Attest receipt names it (field 7): `production` or `sandbox`.
    public var receiptName: String { self == .production ? "production" : "sandbox" }
}
