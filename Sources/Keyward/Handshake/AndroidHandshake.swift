/// The Android handshake (`POST /v1/attest/android`): Play Integrity verdict → session.
/// Wired to the PlayIntegrity module once it lands.
public final class AndroidHandshake: Sendable {
    func attest(body: [UInt8], service: KeywardService, context: RequestContext) throws(APIError) -> String {
        throw APIError(.notImplemented, reason: "android_not_configured")
    }
}
