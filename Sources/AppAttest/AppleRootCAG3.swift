import KeywardCrypto

/// Apple Root CA - G3, the root App Attest *receipts* chain to, pinned in the code.
///
/// Receipts are not signed under the App Attestation Root CA that anchors attestations: every
/// receipt in `Tests/Fixtures/vectors/` (2020 to 2024) is signed by `CN=Application Attestation
/// Fraud Receipt Signing`, issued by `CN=Apple Application Integration CA 5 - G1`, issued by this
/// root. Apple publishes it at https://www.apple.com/certificateauthority/ (AppleRootCA-G3.cer)
/// with SHA-256 fingerprint `63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179`;
/// the PEM below is the copy Apple embeds in those receipts, and a test checks that fingerprint.
/// P-384, valid 2014-04-30T18:19:06Z to 2039-04-30T18:19:06Z.
///
/// Never read from configuration; tests and the device simulator pass their own anchor in code.
public enum AppleRootCAG3 {
    /// The certificate as PEM.
    public static let pem = """
        -----BEGIN CERTIFICATE-----
        MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwS
        QXBwbGUgUm9vdCBDQSAtIEczMSYwJAYDVQQLDB1BcHBsZSBDZXJ0aWZpY2F0aW9u
        IEF1dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcN
        MTQwNDMwMTgxOTA2WhcNMzkwNDMwMTgxOTA2WjBnMRswGQYDVQQDDBJBcHBsZSBS
        b290IENBIC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRpZmljYXRpb24gQXV0aG9y
        aXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqGSM49
        AgEGBSuBBAAiA2IABJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtf
        TjjTuxxEtX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqXl5dvMVztK517
        IDvYuVTZXpmkOlEKMaNCMEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySr
        MA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2gA
        MGUCMQCD6cHEFl4aXTQY2e3v9GwOAEZLuN+yRhHFD/3meoyhpmvOwgPUnPWTxnS4
        at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkLF1vLUagM
        6BgD56KyKA==
        -----END CERTIFICATE-----
        """

    /// The parsed certificate. The PEM above is a constant of this file, so failing to parse it is a
    /// build defect caught by the tests, not an input error.
    public static let certificate: X509Certificate = {
        do {
            return try X509Certificate(pem: pem)
        } catch {
            preconditionFailure("the pinned Apple Root CA - G3 does not parse: \(error)")
        }
    }()
}
