#if canImport(DeviceCheck)
import DeviceCheck
import Foundation

/// ``AppAttestationService`` over Apple's `DCAppAttestService.shared` (iOS 14+, macOS 11+).
///
/// `DCError.invalidKey` becomes ``AttestationServiceError/invalidKey`` (the client then attests a
/// new key) and `DCError.featureUnsupported` ``AttestationServiceError/unsupported``.
@available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, *)
public struct DeviceCheckAttestationService: AppAttestationService {
    /// The adapter over `DCAppAttestService.shared` (no state of its own).
    public init() {}

    /// `DCAppAttestService.shared.isSupported`.
    public var isSupported: Bool { DCAppAttestService.shared.isSupported }

    /// `generateKey()`: returns the key id as Apple gives it (already base64).
    public func generateKey() async throws -> String {
        do { return try await DCAppAttestService.shared.generateKey() } catch { throw Self.mapped(error) }
    }

    /// `attestKey(_:clientDataHash:)`.
    public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        do { return try await DCAppAttestService.shared.attestKey(keyID, clientDataHash: clientDataHash) } catch { throw Self.mapped(error) }
    }

    /// `generateAssertion(_:clientDataHash:)`.
    public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        do {
            return try await DCAppAttestService.shared.generateAssertion(keyID, clientDataHash: clientDataHash)
        } catch { throw Self.mapped(error) }
    }

    static func mapped(_ error: Error) -> AttestationServiceError {
        if let deviceCheck = error as? DCError {
            switch deviceCheck.code {
            case .invalidKey: return .invalidKey
            case .featureUnsupported: return .unsupported
            default: return .failed("DCError \(deviceCheck.code.rawValue)")
            }
        }
        return .failed(String(describing: type(of: error)))
    }
}
#endif
