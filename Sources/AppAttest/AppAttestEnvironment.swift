/// The App Attest environment a deployment accepts — exactly one, so a production deployment can
/// never take a key made by a development build.
public enum AppAttestEnvironment: String, Sendable, CaseIterable {
    case production
    case development

    /// The 16-byte AAGUID authenticatorData carries for this environment (Apple, "Validating apps
    /// that connect to your server", attestation step 8): `appattest` followed by seven 0x00 bytes in
    /// production, `appattestdevelop` in development. Compared byte for byte.
    public var aaguid: [UInt8] {
        switch self {
        case .production: return Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        case .development: return Array("appattestdevelop".utf8)
        }
    }

    /// The environment whose AAGUID is exactly `aaguid`, or nil.
    public init?(aaguid: [UInt8]) {
        guard let match = Self.allCases.first(where: { $0.aaguid == aaguid }) else { return nil }
        self = match
    }
}
