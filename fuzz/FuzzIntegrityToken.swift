// libFuzzer target: Play Integrity's classic token decoder and the verdict JSON decoding and policy,
// on arbitrary input, with fixed test keys (embedded below: never deployed).
// Each input is tried three ways:
// 1. as a classic token (`ClassicTokenDecoder.decode`: JWE A256KW/A256GCM around a JWS ES256);
// 2. as the inner JWS alone (`verify`, reached with @testable: AES-GCM keeps mutations of a whole
//    token from ever getting past step 1, so the JWS stage is fuzzed directly too);
// 3. as verdict JSON (`IntegrityVerdict.decode(json:)`, `decode(decodeIntegrityTokenResponse:)`),
//    judged by `VerdictPolicy.evaluate` and `verify`.
// Properties checked besides "never traps":
// - a token or JWS is only accepted when its signed part (JWS header and payload segments) is one
//   this target signed with the test key: nothing else passes;
// - a decoded token's verdict is the one its payload decodes to;
// - `verify` and `evaluate` agree (accepted ⇔ every check passed; else the same first reason), and an
//   accepted verdict names the expected, configured package.
// Seeds (KEYWARD_FUZZ_WRITE_SEEDS=<dir>): a valid token, its JWS, its verdict JSON (bare and as a
// decodeIntegrityToken answer), and refused variants (alg none, other enc, zip, crit).
import KeywardCrypto
@testable import PlayIntegrity

#if canImport(Glibc)
import Glibc
#endif

private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String = "", line: UInt = #line) {
    if !condition() {
        fputs("FuzzIntegrityToken.swift:\(line): property failed: \(message())\n", stderr)
        abort()
    }
}

private let signingPEM = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgJWKmoyismUlxGFKJ
48chxPH9IT6O0iC6HYoLUbYVF3+hRANCAARzR4CpvZ3k7qCCxtc/Hp0J8OiWrdQG
evhyGJhOT4PpGVhv5yk3NU24XAvP4VZADff8z0Qj6WqRHM1PNlDCexg5
-----END PRIVATE KEY-----
"""
private let decryptionKey = SHA256.hash(Array("keyward fuzz: classic decryption key".utf8))
private let packageName = "dev.keyward.fuzz"
private let challenge = [UInt8](repeating: 0x5a, count: 32)
private let installID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
private let certificateDigest = SHA256.hash(Array("keyward fuzz signing certificate".utf8))
private let nowMillis: Int64 = 1_780_000_000_000
private let jwsHeader = #"{"alg":"ES256"}"#
private let jweHeader = #"{"alg":"A256KW","enc":"A256GCM"}"#

/// The verdict payloads this target signs (standard field order, as Google writes them).
private func verdictJSON(nonce: String, package: String, timestamp: Int64) -> String {
    """
    {"requestDetails":{"requestPackageName":"\(package)","nonce":"\(nonce)","timestampMillis":"\(timestamp)"},\
    "appIntegrity":{"appRecognitionVerdict":"PLAY_RECOGNIZED","packageName":"\(package)",\
    "certificateSha256Digest":["\(Base64.encodeURL(certificateDigest))"],"versionCode":"7"},\
    "deviceIntegrity":{"deviceRecognitionVerdict":["MEETS_BASIC_INTEGRITY","MEETS_DEVICE_INTEGRITY"]},\
    "accountDetails":{"appLicensingVerdict":"LICENSED"}}
    """
}

private struct Fixture {
    let signingKey: ECPrivateKey
    let decoder: ClassicTokenDecoder
    let policy: VerdictPolicy
    let expectation: VerdictExpectation
    /// `BASE64URL(header) . BASE64URL(payload)` of every JWS this target signs.
    let signedParts: Set<String>
    let payloads: [[UInt8]]
}

private let fixture: Fixture = {
    do {
        let key = try ECPrivateKey(pkcs8PEM: signingPEM)
        let keys = try ClassicIntegrityKeys(decryptionKey: decryptionKey, verificationKey: key.publicKey)
        let binding = IntegrityBinding.value(challenge: challenge, installID: installID)
        let payloads = [
            verdictJSON(nonce: Base64.encodeURL(binding), package: packageName, timestamp: nowMillis - 2_000),
            verdictJSON(nonce: Base64.encodeURL(binding), package: "dev.keyward.other", timestamp: nowMillis - 2_000),
            verdictJSON(nonce: "not-the-binding", package: packageName, timestamp: nowMillis - 500_000),
        ].map { Array($0.utf8) }
        return Fixture(
            signingKey: key,
            decoder: ClassicTokenDecoder(keys: keys),
            policy: VerdictPolicy(packageNames: [packageName, "dev.keyward.other"], certificateDigests: [certificateDigest]),
            expectation: VerdictExpectation(binding: binding, packageName: packageName, mode: .classic),
            signedParts: Set(payloads.map { Base64.encodeURL(Array(jwsHeader.utf8)) + "." + Base64.encodeURL($0) }),
            payloads: payloads
        )
    } catch {
        fatalError("fixture: \(error)")
    }
}()

private func signedPart(_ jws: Substring) -> String {
    let parts = jws.utf8.split(separator: UInt8(ascii: "."), maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count == 3 else { return "" }
    return String(Substring(parts[0])) + "." + String(Substring(parts[1]))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIntegrityToken(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    let f = fixture

    // 1. A whole classic token.
    if let verdict = try? f.decoder.decode(text) {
        guard let jws = try? f.decoder.decrypt(text) else { check(false, "decoded but does not decrypt"); return 0 }
        check(f.signedParts.contains(signedPart(jws)), "accepted a token this target did not sign: \(text.debugDescription)")
        let payload = try? f.decoder.verify(jws)
        check(payload.map { try? IntegrityVerdict.decode(json: $0) } == verdict, "verdict differs from its payload's")
        judge(verdict)
    }
    // 2. The inner JWS.
    if let payload = try? f.decoder.verify(Substring(text)) {
        check(f.signedParts.contains(signedPart(Substring(text))), "accepted a JWS this target did not sign: \(text.debugDescription)")
        check(f.payloads.contains(payload), "accepted JWS with a payload this target did not sign")
    }
    // 3. Verdict JSON, bare and as Google's decodeIntegrityToken answer.
    if let verdict = try? IntegrityVerdict.decode(json: bytes) { judge(verdict) }
    if let verdict = try? IntegrityVerdict.decode(decodeIntegrityTokenResponse: bytes) { judge(verdict) }
    return 0
}

/// Runs the policy both ways (standard and classic) and checks `verify` against `evaluate`.
private func judge(_ verdict: IntegrityVerdict) {
    let f = fixture
    for mode in IntegrityMode.allCases {
        var expectation = f.expectation
        expectation.mode = mode
        let report = f.policy.evaluate(verdict, expecting: expectation, nowMillis: nowMillis)
        do {
            let accepted = try f.policy.verify(verdict, expecting: expectation, nowMillis: nowMillis)
            check(report.isValid, "verify accepted what evaluate refuses: \(report.firstFailureReason ?? "")")
            check(accepted.packageName == packageName && verdict.appIntegrity?.packageName == packageName,
                  "accepted package \(accepted.packageName.debugDescription)")
            check(verdict.deviceIntegrity?.deviceRecognitionVerdict?.contains("MEETS_DEVICE_INTEGRITY") == true
                  || verdict.deviceIntegrity?.deviceRecognitionVerdict?.contains("MEETS_STRONG_INTEGRITY") == true,
                  "accepted without device integrity")
            check(verdict.accountDetails?.appLicensingVerdict == "LICENSED", "accepted unlicensed")
            check(verdict.appIntegrity?.appRecognitionVerdict == "PLAY_RECOGNIZED", "accepted unrecognized app")
        } catch {
            check(!report.isValid && report.firstFailureReason == error.reason,
                  "verify refused with \(error.reason), evaluate says \(report.firstFailureReason ?? "valid")")
        }
    }
    // A verdict judged with no expected package: any configured one.
    var anyPackage = f.expectation
    anyPackage.packageName = nil
    if let accepted = try? f.policy.verify(verdict, expecting: anyPackage, nowMillis: nowMillis) {
        check(f.policy.packageNames.contains(accepted.packageName), "accepted unconfigured package")
    }
}

// MARK: - Seeds

private func segment(_ bytes: [UInt8]) -> String { Base64.encodeURL(bytes) }

private func signJWS(header: String = jwsHeader, payload: [UInt8]) throws -> String {
    let signingInput = segment(Array(header.utf8)) + "." + segment(payload)
    return signingInput + "." + segment(try fixture.signingKey.signatureRaw(message: Array(signingInput.utf8)))
}

private func encryptJWE(header: String = jweHeader, plaintext: [UInt8]) throws -> String {
    let encodedHeader = segment(Array(header.utf8))
    let contentKey = SecureRandom.bytes(32)
    let iv = SecureRandom.bytes(12)
    let wrapped = try AESKeyWrap.wrap(kek: decryptionKey, key: contentKey)
    let sealed = try AESGCM.seal(key: contentKey, iv: iv, plaintext: plaintext, aad: Array(encodedHeader.utf8))
    return [encodedHeader, segment(wrapped), segment(iv), segment(sealed.ciphertext), segment(sealed.tag)].joined(separator: ".")
}

private func writeSeed(_ directory: String, _ name: String, _ bytes: [UInt8]) {
    guard let file = fopen(directory + "/" + name, "wb") else { return }
    _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutableRawPointer) -> CInt {
    let f = fixture
    guard let directory = getenv("KEYWARD_FUZZ_WRITE_SEEDS").map({ String(cString: $0) }) else { return 0 }
    do {
        let payload = f.payloads[0]
        let jws = try signJWS(payload: payload)
        let token = try encryptJWE(plaintext: Array(jws.utf8))
        let verdict = try f.decoder.decode(token)
        _ = try f.policy.verify(verdict, expecting: f.expectation, nowMillis: nowMillis)
        let seeds: [String: [UInt8]] = [
            "token": Array(token.utf8),
            "token-other-package": Array(try encryptJWE(plaintext: Array(try signJWS(payload: f.payloads[1]).utf8)).utf8),
            "jws": Array(jws.utf8),
            "jws-stale": Array(try signJWS(payload: f.payloads[2]).utf8),
            "verdict-json": payload,
            "decode-response": Array(#"{"tokenPayloadExternal":"#.utf8) + payload + Array("}".utf8),
            "jws-alg-none": Array((segment(Array(#"{"alg":"none"}"#.utf8)) + "." + segment(payload) + ".").utf8),
            "token-alg-none": Array(try encryptJWE(plaintext: Array((segment(Array(#"{"alg":"none"}"#.utf8)) + "." + segment(payload) + ".").utf8)).utf8),
            "token-enc-cbc": Array(try encryptJWE(header: #"{"alg":"A256KW","enc":"A256CBC-HS512"}"#, plaintext: Array(jws.utf8)).utf8),
            "token-zip": Array(try encryptJWE(header: #"{"alg":"A256KW","enc":"A256GCM","zip":"DEF"}"#, plaintext: Array(jws.utf8)).utf8),
            "jws-crit": Array(try signJWS(header: #"{"alg":"ES256","crit":["b64"]}"#, payload: payload).utf8),
        ]
        for (name, bytes) in seeds { writeSeed(directory, name, bytes) }
    } catch {
        fatalError("seeds: \(error)")
    }
    exit(0)
}
