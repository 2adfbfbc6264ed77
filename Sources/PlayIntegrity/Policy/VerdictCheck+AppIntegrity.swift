// Checks over `appIntegrity` (Google, "Integrity verdicts", application integrity field).
extension VerdictCheck {
    /// `appRecognitionVerdict == PLAY_RECOGNIZED`. `UNRECOGNIZED_VERSION` (a binary Play does not know:
    /// modified or side-loaded) and `UNEVALUATED` (requirements not met, e.g. an untrusted device) refuse.
    /// Slugs: `app_integrity_missing`, `app_not_recognized` (the label is in the detail).
    static let appRecognition = VerdictCheck(name: "appIntegrity.appRecognitionVerdict") { verdict, _ in
        guard let label = verdict.appIntegrity?.appRecognitionVerdict else {
            return .failed(reason: "app_integrity_missing", detail: "appIntegrity.appRecognitionVerdict is absent")
        }
        guard label == "PLAY_RECOGNIZED" else {
            return .failed(reason: "app_not_recognized", detail: "appRecognitionVerdict is \(label.printableLabel)")
        }
        return .passed(label)
    }

    /// `appIntegrity.packageName` is a configured package, and the expected one when the request named it.
    /// This, not `requestPackageName`, is the package Google evaluated.
    /// Slugs: `app_package_missing`, `app_package_mismatch`.
    static let appPackageName = VerdictCheck(name: "appIntegrity.packageName") { verdict, context in
        guard let package = verdict.appIntegrity?.packageName, !package.isEmpty else {
            return .failed(reason: "app_package_missing", detail: "appIntegrity.packageName is absent")
        }
        let configured = context.policy.packageNames.contains(package)
        let expected = context.expectation.packageName.map { $0 == package } ?? true
        guard configured, expected else {
            return .failed(reason: "app_package_mismatch", detail: "appIntegrity.packageName \(package.printableLabel) is not the configured package")
        }
        return .passed(package)
    }

    /// `certificateSha256Digest` contains a configured signing-certificate digest, compared as bytes
    /// (each side decoded by ``CertificateDigest/parse(_:)``).
    /// Slugs: `app_certificate_missing`, `app_certificate_unknown`.
    static let appCertificate = VerdictCheck(name: "appIntegrity.certificateSha256Digest") { verdict, context in
        guard let digests = verdict.appIntegrity?.certificateSha256Digest, !digests.isEmpty else {
            return .failed(reason: "app_certificate_missing", detail: "appIntegrity.certificateSha256Digest is absent or empty")
        }
        let known = digests.contains { text in
            guard let bytes = CertificateDigest.parse(text) else { return false }
            return context.policy.certificateDigests.contains(bytes)
        }
        guard known else {
            return .failed(reason: "app_certificate_unknown", detail: "no signing-certificate digest is a configured one")
        }
        return .passed("a configured signing certificate")
    }
}

extension String {
    /// A verdict label fit for a log line: at most 64 printable ASCII characters, so a hostile or broken
    /// verdict cannot inject lines or flood the log.
    var printableLabel: String {
        let cleaned = String(String.UnicodeScalarView(unicodeScalars.prefix(64).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7f ? $0 : "?" }))
        return cleaned.count < count ? cleaned + "…" : cleaned
    }
}
