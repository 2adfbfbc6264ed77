import Foundation
import Keyward
import KeywardCrypto
import PlayIntegrity

/// `keyward inspect integrity`: decodes one Play Integrity verdict — a classic token with the app's
/// keys, or a verdict JSON file — and prints each policy check with ok / FAILED and its reason slug
/// (text, or one JSON object with `--json`), like `inspect attestation`.
///
///     keyward inspect integrity (--token F --decryption-key B64 --verification-key B64 | --verdict F)
///         --package P [--package P…] --certificate-digest D [--certificate-digest D…]
///         (--challenge-b64 C --install-id U | --binding-b64 B)
///         [--mode standard|classic] [--require-strong-integrity] [--allow-unlicensed]
///         [--max-age-seconds N] [--at UNIX | --at-millis MS] [--json]
///
/// - `--token`: a file holding the compact JWE (whitespace ignored). Keys as Play Console shows them:
///   base64 AES-256 decryption key, base64 SubjectPublicKeyInfo verification key.
/// - `--verdict`: a JSON file, the verdict object or Google's `{"tokenPayloadExternal": …}` answer.
/// - `--certificate-digest`: hex (colons allowed), base64 or base64url; any length here, so the short
///   placeholders of Google's documentation can be inspected.
/// - `--mode` picks the binding field (`requestHash` standard, `nonce` classic); default classic for
///   `--token`, and for `--verdict` whichever of the two fields the verdict carries.
/// - `--at` / `--at-millis` default to now.
///
/// Exit codes: 0 valid, 1 invalid (including a token or file that does not decode), 2 usage error.
enum InspectIntegrityCommand {
    static let usage = """
        usage: keyward inspect integrity (--token F --decryption-key B64 --verification-key B64 | --verdict F)
                   --package P [--package P…] --certificate-digest D [--certificate-digest D…]
                   (--challenge-b64 C --install-id U | --binding-b64 B)
                   [--mode standard|classic] [--require-strong-integrity] [--allow-unlicensed]
                   [--max-age-seconds N] [--at UNIX | --at-millis MS] [--json]
        exit codes: 0 valid, 1 invalid, 2 usage error

        """

    /// Entry point: `arguments` after `inspect integrity`; prints and returns the exit code.
    static func run(_ arguments: [String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            FileHandle.standardOutput.write(Data(usage.utf8))
            return 0
        }
        do {
            let (output, code) = try inspect(arguments)
            FileHandle.standardOutput.write(Data(output.utf8))
            return code
        } catch {
            FileHandle.standardError.write(Data("keyward inspect integrity: \(error)\n\(usage)".utf8))
            return 2
        }
    }

    /// The work of ``run(_:)`` without the printing: the report text and the exit code (0 or 1).
    /// - Throws: `CommandLineOptions.UsageError` for anything that makes it exit 2.
    static func inspect(_ arguments: [String], now: () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }) throws -> (String, Int32) {
        let options = try CommandLineOptions(
            arguments,
            valueFlags: ["token", "decryption-key", "verification-key", "verdict",
                         "challenge-b64", "install-id", "binding-b64", "mode", "max-age-seconds", "at", "at-millis"],
            switchFlags: ["require-strong-integrity", "allow-unlicensed", "json"],
            repeatableFlags: ["package", "certificate-digest"])
        if let extra = options.positional.first { throw CommandLineOptions.UsageError("unexpected argument '\(extra)'") }
        let policy = try policy(options)
        let binding = try binding(options)
        let nowMillis = try verificationTime(options, now: now)
        let json = options.has("json")

        let decoded: Decoded
        switch (options.value("token"), options.value("verdict")) {
        case (let token?, nil):
            decoded = try classic(tokenPath: token, options)
        case (nil, let verdict?):
            decoded = verdictFile(text: try read(verdict, flag: "verdict"))
        default:
            throw CommandLineOptions.UsageError("give exactly one of --token and --verdict")
        }
        let mode = try mode(options, decoded: decoded)
        var report = IntegrityInspection(mode: mode, decoding: decoded.step, checks: nil)
        if let verdict = decoded.verdict {
            report.checks = policy.evaluate(verdict, expecting: VerdictExpectation(binding: binding, packageName: nil, mode: mode), nowMillis: nowMillis)
            report.packageName = verdict.appIntegrity?.packageName
        }
        return (json ? report.jsonText : report.plainText, report.isValid ? 0 : 1)
    }

    // MARK: inputs

    struct Decoded {
        let step: IntegrityInspection.Step
        let verdict: IntegrityVerdict?
        let defaultMode: IntegrityMode?
    }

    private static func classic(tokenPath: String, _ options: CommandLineOptions) throws -> Decoded {
        let text = try read(tokenPath, flag: "token")
        let keys: ClassicIntegrityKeys
        do {
            keys = try ClassicIntegrityKeys(decryptionKeyBase64: try options.required("decryption-key"),
                                            verificationKeyBase64: try options.required("verification-key"))
        } catch let error as PlayIntegrityError {
            throw CommandLineOptions.UsageError(error.detail)
        }
        let token = String(text.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) })
        let name = "token (JWE A256KW/A256GCM, JWS ES256)"
        do {
            let verdict = try ClassicTokenDecoder(keys: keys).decode(token)
            return Decoded(step: .init(name: name, outcome: .passed("decrypted and signature verified")), verdict: verdict, defaultMode: .classic)
        } catch {
            return Decoded(step: .init(name: name, outcome: .failed(reason: error.reason, detail: error.detail)), verdict: nil, defaultMode: .classic)
        }
    }

    private static func verdictFile(text: String) -> Decoded {
        let bytes = Array(text.utf8)
        let name = "verdict JSON"
        let wrapped = try? IntegrityVerdict.decode(decodeIntegrityTokenResponse: bytes)
        let verdict: IntegrityVerdict
        do throws(PlayIntegrityError) {
            if let wrapped {
                verdict = wrapped
            } else {
                verdict = try IntegrityVerdict.decode(json: bytes)
            }
        } catch {
            return Decoded(step: .init(name: name, outcome: .failed(reason: error.reason, detail: error.detail)), verdict: nil, defaultMode: nil)
        }
        let request = verdict.requestDetails
        let mode: IntegrityMode? = request?.requestHash != nil ? .standard : (request?.nonce != nil ? .classic : nil)
        return Decoded(step: .init(name: name, outcome: .passed(wrapped == nil ? "verdict object" : "decodeIntegrityToken answer")), verdict: verdict, defaultMode: mode)
    }

    private static func mode(_ options: CommandLineOptions, decoded: Decoded) throws -> IntegrityMode {
        guard let text = options.value("mode") else { return decoded.defaultMode ?? .standard }
        guard let mode = IntegrityMode(rawValue: text) else { throw CommandLineOptions.UsageError("--mode must be standard or classic") }
        return mode
    }

    private static func policy(_ options: CommandLineOptions) throws -> VerdictPolicy {
        let packages = options.values["package"] ?? []
        guard !packages.isEmpty else { throw CommandLineOptions.UsageError("missing --package") }
        let digestTexts = options.values["certificate-digest"] ?? []
        guard !digestTexts.isEmpty else { throw CommandLineOptions.UsageError("missing --certificate-digest") }
        let digests = try digestTexts.map { text in
            guard let bytes = CertificateDigest.parse(text) else {
                throw CommandLineOptions.UsageError("--certificate-digest is neither hex nor base64")
            }
            return bytes
        }
        var policy = VerdictPolicy(packageNames: packages, certificateDigests: digests,
                                   deviceRequirement: options.has("require-strong-integrity") ? .strongIntegrity : .deviceIntegrity,
                                   requireLicensed: !options.has("allow-unlicensed"))
        if let text = options.value("max-age-seconds") {
            guard let seconds = Int64(text), seconds > 0, seconds <= 86_400 else {
                throw CommandLineOptions.UsageError("--max-age-seconds must be 1…86400")
            }
            policy.maxAgeMillis = seconds * 1_000
        }
        return policy
    }

    private static func binding(_ options: CommandLineOptions) throws -> [UInt8] {
        switch (options.value("binding-b64"), options.value("challenge-b64"), options.value("install-id")) {
        case (let text?, nil, nil):
            guard let bytes = Base64.decode(text) else { throw CommandLineOptions.UsageError("--binding-b64 is not base64") }
            return bytes
        case (nil, let challenge?, let installID?):
            guard let bytes = Base64.decode(challenge) else { throw CommandLineOptions.UsageError("--challenge-b64 is not base64") }
            return IntegrityBinding.value(challenge: bytes, installID: installID)
        default:
            throw CommandLineOptions.UsageError("give --challenge-b64 with --install-id, or --binding-b64")
        }
    }

    private static func verificationTime(_ options: CommandLineOptions, now: () -> Int64) throws -> Int64 {
        switch (options.value("at"), options.value("at-millis")) {
        case (nil, nil):
            return now()
        case (let seconds?, nil):
            guard let value = InspectCommand.unixSeconds(seconds), value < Int64.max / 1_000 else { throw CommandLineOptions.UsageError("--at must be unix seconds") }
            return value * 1_000
        case (nil, let millis?):
            guard let value = InspectCommand.unixSeconds(millis) else { throw CommandLineOptions.UsageError("--at-millis must be unix milliseconds") }
            return value
        default:
            throw CommandLineOptions.UsageError("give --at or --at-millis, not both")
        }
    }

    private static func read(_ path: String, flag: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandLineOptions.UsageError("cannot read --\(flag) \(path)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
