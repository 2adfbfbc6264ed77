import Foundation
import KeywardCrypto
import Upstream

/// Apple's App Attest receipt endpoint (Apple, "Assessing fraud risk", "Request a new receipt"):
/// `POST <base>/v1/attestationData` with the device's latest receipt as base64 text, authorized by
/// the same ES256 JWT as the DeviceCheck API (header `alg`/`kid`, claims `iss` team id and `iat`,
/// signed with the team's DeviceCheck key; `DeviceCheckClient.authorization` makes it), sent as the
/// `Authorization` header's whole value.
///
/// Answers: 200 with a new receipt as base64 text; 304 when this receipt was exchanged too recently
/// (Apple answers the same receipt again no sooner than it allows); 404 when Apple has no data for
/// the receipt (it keeps 30 days). Calls block until Apple answers or the deadline passes: run them
/// off the event loops.
public struct ReceiptRefreshClient: Sendable {
    /// What Apple answered.
    public enum Answer: Sendable, Equatable {
        /// 200: the new receipt (DER/BER bytes, not yet verified).
        case receipt([UInt8])
        /// 304: too soon; keep the current receipt.
        case notModified
        /// 404: Apple has no data for this receipt.
        case noData
    }

    /// Why there is no answer to act on: `receipt_refresh_unreachable` (no answer before the
    /// deadline), `receipt_refresh_status_<n>`, `receipt_refresh_malformed`, `receipt_refresh_sign_failed`.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Apple's production and development receipt endpoints' base URLs.
    public static let productionURL = "https://data.appattest.apple.com"
    public static let developmentURL = "https://data-development.appattest.apple.com"

    let signer: DeviceCheckClient
    let baseURL: String
    let timeoutMs: Int

    /// - Parameters:
    ///   - signer: the DeviceCheck client whose team id, key id and private key sign the JWT, and
    ///     whose HTTP client carries the call.
    ///   - baseURL: ``productionURL``, ``developmentURL`` or a test server; no trailing slash.
    ///   - timeoutMs: the connect and idle deadline of one call.
    public init(signer: DeviceCheckClient, baseURL: String, timeoutMs: Int) {
        self.signer = signer
        self.baseURL = baseURL
        self.timeoutMs = timeoutMs
    }

    /// Exchanges `receipt` at `now` (unix seconds, the JWT's `iat`).
    /// - Throws: ``Failure``.
    public func exchange(receipt: [UInt8], now: Int64) throws(Failure) -> Answer {
        let jwt: String
        do {
            jwt = try signer.authorization(now: now)
        } catch {
            throw Failure(reason: "receipt_refresh_sign_failed")
        }
        let response: UpstreamResponse
        do {
            response = try signer.http.perform(UpstreamRequest(
                url: baseURL + "/v1/attestationData", method: "POST",
                headers: [("Authorization", jwt), ("Content-Type", "text/plain")], body: Array(Base64.encode(receipt).utf8),
                connectTimeoutMs: timeoutMs, idleTimeoutMs: timeoutMs), maxResponseBytes: 64 * 1024)
        } catch {
            throw Failure(reason: "receipt_refresh_unreachable")
        }
        switch response.status {
        case 200:
            let text = String(decoding: response.body, as: UTF8.self).filter { !$0.isWhitespace }
            guard let bytes = Base64.decode(text), !bytes.isEmpty else { throw Failure(reason: "receipt_refresh_malformed") }
            return .receipt(bytes)
        case 304: return .notModified
        case 404: return .noData
        default: throw Failure(reason: "receipt_refresh_status_\(response.status)")
        }
    }
}
