import KeywardCrypto

/// Apple's App Attestation Root CA, pinned in the code (Apple, "Validating apps that connect to your
/// server", attestation step 1; published at https://www.apple.com/certificateauthority/).
///
/// P-384, valid 2020-03-18T18:32:53Z to 2045-03-15T00:00:00Z, subject
/// `CN=Apple App Attestation Root CA, O=Apple Inc., ST=California`, SHA-256 fingerprint
/// `1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932` (a test pins both).
/// It is never read from configuration: the only other anchor a verifier can get is one passed in
/// code, which is what tests and the device simulator do.
public enum AppleAppAttestationRoot {
    /// The certificate as PEM.
    public static let pem = """
        -----BEGIN CERTIFICATE-----
        MIICITCCAaegAwIBAgIQC/O+DvHN0uD7jG5yH2IXmDAKBggqhkjOPQQDAzBSMSYw
        JAYDVQQDDB1BcHBsZSBBcHAgQXR0ZXN0YXRpb24gUm9vdCBDQTETMBEGA1UECgwK
        QXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTAeFw0yMDAzMTgxODMyNTNa
        Fw00NTAzMTUwMDAwMDBaMFIxJjAkBgNVBAMMHUFwcGxlIEFwcCBBdHRlc3RhdGlv
        biBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJbmMuMRMwEQYDVQQIDApDYWxpZm9y
        bmlhMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAERTHhmLW07ATaFQIEVwTtT4dyctdh
        NbJhFs/Ii2FdCgAHGbpphY3+d8qjuDngIN3WVhQUBHAoMeQ/cLiP1sOUtgjqK9au
        Yen1mMEvRq9Sk3Jm5X8U62H+xTD3FE9TgS41o0IwQDAPBgNVHRMBAf8EBTADAQH/
        MB0GA1UdDgQWBBSskRBTM72+aEH/pwyp5frq5eWKoTAOBgNVHQ8BAf8EBAMCAQYw
        CgYIKoZIzj0EAwMDaAAwZQIwQgFGnByvsiVbpTKwSga0kP0e8EeDS4+sQmTvb7vn
        53O5+FRXgeLhpJ06ysC5PrOyAjEAp5U4xDgEgllF7En3VcE3iexZZtKeYnpqtijV
        oyFraWVIyd/dganmrduC1bmTBGwD
        -----END CERTIFICATE-----
        """

    /// The parsed certificate. The PEM above is a constant of this file, so failing to parse it is a
    /// build defect caught by the tests, not an input error.
    public static let certificate: X509Certificate = {
        do {
            return try X509Certificate(pem: pem)
        } catch {
            preconditionFailure("the pinned Apple App Attestation Root CA does not parse: \(error)")
        }
    }()
}
