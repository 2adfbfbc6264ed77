import AppAttest
import Foundation
import Keyward
import KeywardCrypto

/// `keyward inspect attestation|assertion` (and the dispatch to `inspect integrity`): runs Apple's App Attest steps on one attestation or
/// assertion and prints each step with ok / failed and its reason (text, or one JSON object with
/// `--json`). The flags are fixed, since scripts rely on them:
///
///     keyward inspect attestation --file F --team-id T --bundle-id B --key-id K
///         [--challenge-b64 C | --client-data-b64 D | --client-data-hash-hex H]
///         [--environment production|development] [--at UNIX] [--json]
///     keyward inspect assertion --file F --team-id T --bundle-id B --public-key-pem P
///         [--challenge-b64 C | --client-data-b64 D | --client-data-hash-hex H]
///         --stored-counter N [--at UNIX] [--json]
///
/// - `--file`: base64 or base64url text (whitespace ignored). `--key-id`: base64, either alphabet.
/// - `--challenge-b64` / `--client-data-b64`: bytes (either alphabet) hashed with SHA-256 into
///   clientDataHash; `--client-data-hash-hex` is clientDataHash as given, any length. Exactly one.
/// - `--public-key-pem`: the PEM text itself, or a path to a PEM file (SubjectPublicKeyInfo, P-256).
/// - `--environment` defaults to production; `--at` (unix seconds) defaults to now. Assertions have
///   no time-dependent step, so `--at` is accepted and unused there.
///
/// Exit codes: 0 valid, 1 invalid (including input that does not decode), 2 usage error
/// (unknown or missing flag, unreadable file, a flag value that does not parse).
enum InspectCommand {
    static let usage = """
        usage: keyward inspect attestation --file F --team-id T --bundle-id B --key-id K
                   [--challenge-b64 C | --client-data-b64 D | --client-data-hash-hex H]
                   [--environment production|development] [--at UNIX] [--json]
               keyward inspect assertion --file F --team-id T --bundle-id B --public-key-pem P
                   [--challenge-b64 C | --client-data-b64 D | --client-data-hash-hex H]
                   --stored-counter N [--at UNIX] [--json]
               keyward inspect receipt --help     (App Attest receipts and the risk metric)
               keyward inspect integrity --help   (Play Integrity verdicts)
        exit codes: 0 valid, 1 invalid, 2 usage error

        """

    private static let commonFlags: Set<String> = [
        "file", "team-id", "bundle-id", "challenge-b64", "client-data-b64", "client-data-hash-hex", "at",
    ]

    /// Entry point: `arguments` after `inspect`; returns the exit code.
    static func run(_ arguments: [String]) -> Int32 {
        // `inspect integrity` (Play Integrity) has its own flags and help.
        if arguments.first == "integrity" { return InspectIntegrityCommand.run(Array(arguments.dropFirst())) }
        // `inspect receipt` (App Attest receipts) has its own flags and help.
        if arguments.first == "receipt" { return InspectReceiptCommand.run(Array(arguments.dropFirst())) }
        if arguments.contains("--help") || arguments.contains("-h") {
            FileHandle.standardOutput.write(Data(usage.utf8))
            return 0
        }
        do {
            switch arguments.first {
            case "attestation":
                return try attestation(Array(arguments.dropFirst()))
            case "assertion":
                return try assertion(Array(arguments.dropFirst()))
            default:
                throw CommandLineOptions.UsageError("expected `attestation`, `assertion`, `receipt` or `integrity`")
            }
        } catch {
            FileHandle.standardError.write(Data("keyward inspect: \(error)\n\(usage)".utf8))
            return 2
        }
    }

    // MARK: attestation

    private static func attestation(_ arguments: [String]) throws -> Int32 {
        let options = try CommandLineOptions(arguments, valueFlags: commonFlags.union(["key-id", "environment"]),
                                             switchFlags: ["json"])
        try noPositional(options)
        let text = try readFile(options.required("file"))
        let teamID = try options.required("team-id")
        let bundleID = try options.required("bundle-id")
        guard let keyID = Base64.decode(try options.required("key-id")) else {
            throw CommandLineOptions.UsageError("--key-id is not base64")
        }
        let clientDataHash = try clientDataHash(options)
        let environmentName = options.value("environment") ?? AppAttestEnvironment.production.rawValue
        guard let environment = AppAttestEnvironment(rawValue: environmentName) else {
            throw CommandLineOptions.UsageError("--environment must be production or development")
        }
        let time = try verificationTime(options)

        let verifier = AttestationVerifier(teamID: teamID, bundleIDs: [bundleID], environment: environment)
        guard let attestation = decodeBase64File(text) else {
            return emit(undecodable(kind: "attestation"), details: [:], json: options.has("json"))
        }
        let report = verifier.inspect(attestation: attestation, keyID: keyID, clientDataHash: clientDataHash, at: time)
        var details: [String: String] = [:]
        if report.isValid, let key = try? verifier.verify(attestation: attestation, keyID: keyID, clientDataHash: clientDataHash, at: time) {
            details = [
                "app_id": key.appID, "environment": key.environment.rawValue,
                "key_id_b64": Base64.encode(key.keyID), "public_key_x962_b64": Base64.encode(key.publicKey),
                "counter": String(key.counter),
            ]
        }
        return emit(report, details: details, json: options.has("json"))
    }

    // MARK: assertion

    private static func assertion(_ arguments: [String]) throws -> Int32 {
        let options = try CommandLineOptions(arguments, valueFlags: commonFlags.union(["public-key-pem", "stored-counter"]),
                                             switchFlags: ["json"])
        try noPositional(options)
        let text = try readFile(options.required("file"))
        let teamID = try options.required("team-id")
        let bundleID = try options.required("bundle-id")
        let publicKey = try publicKey(options.required("public-key-pem"))
        let clientDataHash = try clientDataHash(options)
        guard let storedCounter = UInt32(try options.required("stored-counter")) else {
            throw CommandLineOptions.UsageError("--stored-counter must be an integer 0…4294967295")
        }
        _ = try verificationTime(options)

        let verifier = AssertionVerifier(teamID: teamID, bundleIDs: [bundleID])
        guard let assertion = decodeBase64File(text) else {
            return emit(undecodable(kind: "assertion"), details: [:], json: options.has("json"))
        }
        let appID = "\(teamID).\(bundleID)"
        let report = verifier.inspect(assertion: assertion, publicKey: publicKey, clientDataHash: clientDataHash,
                                      storedCounter: storedCounter, appID: appID)
        var details: [String: String] = [:]
        if report.isValid, let counter = try? verifier.verify(assertion: assertion, publicKey: publicKey, clientDataHash: clientDataHash,
                                                                storedCounter: storedCounter, appID: appID) {
            details = ["app_id": appID, "counter": String(counter)]
        }
        return emit(report, details: details, json: options.has("json"))
    }

    // MARK: inputs

    static func noPositional(_ options: CommandLineOptions) throws {
        if let extra = options.positional.first { throw CommandLineOptions.UsageError("unexpected argument '\(extra)'") }
    }

    static func readFile(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandLineOptions.UsageError("cannot read --file \(path)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The file's base64 or base64url text as bytes, whitespace ignored; nil if it is neither.
    static func decodeBase64File(_ text: String) -> [UInt8]? {
        let compact = String(text.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) })
        guard !compact.isEmpty else { return nil }
        return Base64.decode(compact)
    }

    /// Exactly one of the three clientDataHash flags.
    private static func clientDataHash(_ options: CommandLineOptions) throws -> [UInt8] {
        let given = ["challenge-b64", "client-data-b64", "client-data-hash-hex"].filter { options.value($0) != nil }
        guard given.count == 1, let flag = given.first, let value = options.value(flag) else {
            throw CommandLineOptions.UsageError("give exactly one of --challenge-b64, --client-data-b64, --client-data-hash-hex")
        }
        if flag == "client-data-hash-hex" {
            guard let bytes = Hex.decode(value) else { throw CommandLineOptions.UsageError("--client-data-hash-hex is not hex") }
            return bytes
        }
        guard let bytes = Base64.decode(value) else { throw CommandLineOptions.UsageError("--\(flag) is not base64") }
        return SHA256.hash(bytes)
    }

    static func verificationTime(_ options: CommandLineOptions) throws -> Int64 {
        guard let text = options.value("at") else { return Int64(Date().timeIntervalSince1970) }
        guard let time = unixSeconds(text) else { throw CommandLineOptions.UsageError("--at must be unix seconds (digits only)") }
        return time
    }

    /// `text` as a count of seconds (or milliseconds) since 1970: digits only, since a sign, a
    /// space or a fraction is a mistake, not a time before 1970; nil when it is not, or overflows.
    static func unixSeconds(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }

    /// `--public-key-pem`: PEM text, or a path to a PEM file; must be a P-256 key.
    private static func publicKey(_ value: String) throws -> [UInt8] {
        let pem = value.contains("-----BEGIN") ? value : try readFile(value)
        guard let key = try? ECPublicKey(pem: pem), key.curve == .p256 else {
            throw CommandLineOptions.UsageError("--public-key-pem is not a P-256 public key PEM")
        }
        return key.x962
    }

    private static func undecodable(kind: String) -> VerificationReport {
        VerificationReport(kind: kind, steps: [.init(name: "decode", source: "base64 file",
                                                     outcome: .failed(AppAttestError(.malformedBase64, "--file is not base64")))])
    }

    // MARK: output

    /// Prints the report and returns the exit code (0 valid, 1 invalid).
    static func emit(_ report: VerificationReport, details: [String: String], json: Bool) -> Int32 {
        let output = json ? jsonText(report, details: details) : plainText(report, details: details)
        FileHandle.standardOutput.write(Data(output.utf8))
        return report.isValid ? 0 : 1
    }

    private static func plainText(_ report: VerificationReport, details: [String: String]) -> String {
        var lines = ["\(report.kind): " + (report.firstFailure.map { "INVALID (\($0.reason))" } ?? "valid")]
        for step in report.steps {
            let name = step.name.padding(toLength: 18, withPad: " ", startingAt: 0)
            let source = step.source.padding(toLength: 28, withPad: " ", startingAt: 0)
            switch step.outcome {
            case .passed: lines.append("  \(name) \(source) ok")
            case .failed(let error): lines.append("  \(name) \(source) FAILED \(error.reason): \(error.description)")
            case .notRun: lines.append("  \(name) \(source) not run")
            }
        }
        for key in details.keys.sorted() { lines.append("  \(key): \(details[key] ?? "")") }
        return lines.joined(separator: "\n") + "\n"
    }

    private struct JSONReport: Encodable {
        struct Step: Encodable {
            let name: String
            let source: String
            let result: String
            let reason: String?
            let detail: String?
        }
        let kind: String
        let valid: Bool
        let reason: String?
        let steps: [Step]
        let details: [String: String]
    }

    private static func jsonText(_ report: VerificationReport, details: [String: String]) -> String {
        let steps = report.steps.map { step -> JSONReport.Step in
            switch step.outcome {
            case .passed: return .init(name: step.name, source: step.source, result: "ok", reason: nil, detail: nil)
            case .failed(let error): return .init(name: step.name, source: step.source, result: "failed", reason: error.reason, detail: error.description)
            case .notRun: return .init(name: step.name, source: step.source, result: "not_run", reason: nil, detail: nil)
            }
        }
        let object = JSONReport(kind: report.kind, valid: report.isValid, reason: report.firstFailure?.reason, steps: steps, details: details)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(object) else { return "{}\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
