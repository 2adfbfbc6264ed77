import AppAttest
import Foundation
import Keyward
import KeywardCrypto

/// `keyward inspect receipt`: verifies one App Attest receipt (Apple, "Assessing fraud risk") under
/// the pinned Apple Root CA - G3 and prints each step with ok / FAILED and its reason, then the
/// receipt's fields — the risk metric among them, or that the receipt's type carries none — as text,
/// or one JSON object with `--json`, like `inspect attestation`. The flags are fixed:
///
///     keyward inspect receipt (--attestation-file F | --receipt-file F) [--at UNIX] [--json]
///
/// - `--attestation-file`: the attestation object as base64 or base64url text (as the vectors store
///   it); its `attStmt.receipt` is inspected and matched to the attestation itself: the App ID
///   against the RP ID hash, the attested key against `x5c[0]`, the client hash against the
///   credential certificate's nonce, the environment against the AAGUID.
/// - `--receipt-file`: a bare receipt, as base64 text or the DER/BER bytes themselves. Only the
///   envelope, chain, fields, creation and expiration are checked: there is nothing to match it to.
/// - `--at` (unix seconds) defaults to now: the chain, the creation time (less
///   `ReceiptVerifier.creationLeewaySeconds`) and the expiration time are judged at it.
///
/// Exit codes: 0 valid, 1 invalid (including input that does not decode), 2 usage error.
enum InspectReceiptCommand {
    static let usage = """
        usage: keyward inspect receipt (--attestation-file F | --receipt-file F) [--at UNIX] [--json]
        exit codes: 0 valid, 1 invalid, 2 usage error

        """

    /// Entry point: `arguments` after `inspect receipt`; prints and returns the exit code.
    static func run(_ arguments: [String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            FileHandle.standardOutput.write(Data(usage.utf8))
            return 0
        }
        do {
            return try inspect(arguments)
        } catch {
            FileHandle.standardError.write(Data("keyward inspect receipt: \(error)\n\(usage)".utf8))
            return 2
        }
    }

    private static func inspect(_ arguments: [String]) throws -> Int32 {
        let options = try CommandLineOptions(arguments, valueFlags: ["attestation-file", "receipt-file", "at"], switchFlags: ["json"])
        try InspectCommand.noPositional(options)
        let attestationPath = options.value("attestation-file")
        let receiptPath = options.value("receipt-file")
        guard (attestationPath == nil) != (receiptPath == nil) else {
            throw CommandLineOptions.UsageError("give exactly one of --attestation-file, --receipt-file")
        }
        let time = try InspectCommand.verificationTime(options)
        let json = options.has("json")
        let verifier = ReceiptVerifier()

        let receipt: [UInt8]
        var binding: ReceiptBinding?
        if let attestationPath {
            let text = try InspectCommand.readFile(attestationPath)
            guard let bytes = InspectCommand.decodeBase64File(text) else {
                return InspectCommand.emit(failedDecode(AppAttestError(.malformedBase64, "--attestation-file is not base64")),
                                           details: [:], json: json)
            }
            switch decodeAttestation(bytes) {
            case .success(let decoded):
                receipt = decoded.object.receipt
                binding = decoded.binding
            case .failure(let error):
                return InspectCommand.emit(failedDecode(error), details: [:], json: json)
            }
        } else if let receiptPath {
            guard let data = FileManager.default.contents(atPath: receiptPath) else {
                throw CommandLineOptions.UsageError("cannot read --receipt-file \(receiptPath)")
            }
            receipt = bareReceipt(Array(data))
        } else {
            receipt = []
        }
        let (report, fields) = verifier.inspect(receipt: receipt, at: time, binding: binding)
        return InspectCommand.emit(report, details: fields.map(details) ?? [:], json: json)
    }

    private static func decodeAttestation(_ bytes: [UInt8]) -> Result<(object: AttestationObject, binding: ReceiptBinding), AppAttestError> {
        do throws(AppAttestError) {
            let object = try AttestationObject(bytes: bytes)
            return .success((object, try ReceiptBinding.attestation(object, appID: nil, clientDataHash: nil)))
        } catch {
            return .failure(error)
        }
    }

    /// A receipt file's bytes: base64 text (either alphabet, whitespace ignored) when it is that,
    /// else the bytes as they are (a DER or BER envelope starts with 0x30, never base64 text).
    private static func bareReceipt(_ data: [UInt8]) -> [UInt8] {
        let text = String(decoding: data, as: UTF8.self)
        if data.first != 0x30, let decoded = InspectCommand.decodeBase64File(text) { return decoded }
        return data
    }

    private static func failedDecode(_ error: AppAttestError) -> VerificationReport {
        VerificationReport(kind: "receipt", steps: [.init(name: "decode", source: "attestation object", outcome: .failed(error))])
    }

    /// The fields for people: times as RFC 3339 and unix seconds, the token and the attested key by
    /// size and key id only.
    private static func details(_ fields: AppAttestReceipt) -> [String: String] {
        var details = [
            "app_id": fields.appID,
            "receipt_type": fields.kind.rawValue,
            "creation_time": time(fields.creationTime),
            "expiration_time": time(fields.expirationTime),
            "token_bytes": String(fields.token.count),
            "risk_metric": fields.riskMetric.map(String.init)
                ?? "none (an \(fields.kind.rawValue) receipt carries no risk metric; Apple's receipt endpoint gives one)",
        ]
        if let environment = fields.environment { details["environment"] = environment }
        if let notBefore = fields.notBefore { details["not_before"] = time(notBefore) }
        if let clientHash = fields.clientHash { details["client_hash_hex"] = Hex.encode(clientHash) }
        if let certificate = try? X509Certificate(der: fields.attestedKeyCertificate), let key = try? certificate.publicKey() {
            details["attested_key_id_b64"] = Base64.encode(SHA256.hash(key.x962))
        }
        return details
    }

    private static func time(_ unix: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return "\(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unix)))) (\(unix))"
    }
}
