import Foundation

extension IntegrityVerdict {
    /// Decodes a verdict payload from its JSON text (UTF-8 bytes): the JWS payload of a classic token,
    /// or the `tokenPayloadExternal` object of a standard decode.
    ///
    /// Lenient per field, strict at the top: the text must be one JSON object; inside it, a missing or
    /// wrongly typed field becomes `nil` (which never vouches), so an odd payload is refused by the
    /// policy with the reason of the first field it lacks instead of by a parser error.
    /// - Throws: ``PlayIntegrityError/rejected(reason:detail:)`` `verdict_malformed` when the text is not a JSON object.
    public static func decode(json: [UInt8]) throws(PlayIntegrityError) -> IntegrityVerdict {
        try IntegrityVerdict(object: JSONObject.parse(json, what: "verdict payload"))
    }

    /// Decodes the body of Google's `decodeIntegrityToken` response, `{"tokenPayloadExternal": {...}}`
    /// (Google, "Make a standard API request", decode step; REST reference `v1.decodeIntegrityToken`).
    /// - Throws: ``PlayIntegrityError/googleUnavailable(reason:detail:)`` `google_response_malformed`
    ///   when the body is not that shape: a broken answer from Google is Google's fault, not the device's.
    public static func decode(decodeIntegrityTokenResponse json: [UInt8]) throws(PlayIntegrityError) -> IntegrityVerdict {
        let object: [String: Any]
        do {
            object = try JSONObject.parse(json, what: "decodeIntegrityToken response")
        } catch {
            throw .googleUnavailable(reason: "google_response_malformed", detail: "decodeIntegrityToken answered with a body that is not a JSON object")
        }
        guard let payload = object["tokenPayloadExternal"] as? [String: Any] else {
            throw .googleUnavailable(reason: "google_response_malformed", detail: "decodeIntegrityToken answer has no tokenPayloadExternal object")
        }
        return IntegrityVerdict(object: payload)
    }

    init(object: [String: Any]) {
        if let request = object["requestDetails"] as? [String: Any] {
            requestDetails = RequestDetails(
                requestPackageName: request["requestPackageName"] as? String,
                requestHash: request["requestHash"] as? String,
                nonce: request["nonce"] as? String,
                timestampMillis: JSONObject.int64(request["timestampMillis"])
            )
        }
        if let app = object["appIntegrity"] as? [String: Any] {
            appIntegrity = AppIntegrity(
                appRecognitionVerdict: app["appRecognitionVerdict"] as? String,
                packageName: app["packageName"] as? String,
                certificateSha256Digest: JSONObject.strings(app["certificateSha256Digest"]),
                versionCode: (app["versionCode"] as? String) ?? JSONObject.int64(app["versionCode"]).map { String($0) }
            )
        }
        if let device = object["deviceIntegrity"] as? [String: Any] {
            deviceIntegrity = DeviceIntegrity(deviceRecognitionVerdict: JSONObject.strings(device["deviceRecognitionVerdict"]))
        }
        if let account = object["accountDetails"] as? [String: Any] {
            accountDetails = AccountDetails(appLicensingVerdict: account["appLicensingVerdict"] as? String)
        }
    }
}
