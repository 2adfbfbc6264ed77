// libFuzzer target: `SessionVerifier.verify` on arbitrary token text, with a fixed key set (an active
// key and a verify-only key, both embedded below: test keys, never deployed).
// Properties checked besides "never traps":
// - a token that verifies re-serializes to itself: its header and payload segments are exactly what
//   `SessionIssuer` writes for the claims it carries, under the `kid` that signed it, and its
//   signature segment is the canonical base64url of 64 bytes — so only tokens signed by the set's
//   keys pass, and each in the one spelling Keyward issues (ECDSA's own (r, n−s) twin is not
//   searched for: a mutator does not find it, and it names the same claims);
// - a verifier with a cache and one without agree on every token.
// Seeds (KEYWARD_FUZZ_WRITE_SEEDS=<dir>): a valid token under each key, and mutations of them.
import KeywardCrypto
import Sessions

#if canImport(Glibc)
import Glibc
#endif

private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String = "", line: UInt = #line) {
    if !condition() {
        fputs("FuzzSessionToken.swift:\(line): property failed: \(message())\n", stderr)
        abort()
    }
}

private let activePEM = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgaWdSOvZO18v5Bx9/
sTXgEKcOo09hyxgj+UZ44RbOWjuhRANCAAQoBAb11wxueX8BPi5meeDRtDqrjyrS
itjJm0YK8e3W0Mo4WbE8UcKrfcD81gHjL1O9lllKIiYm1aZFlwbneLuz
-----END PRIVATE KEY-----
"""
private let previousPEM = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgRU0xaDIINqJD23hG
a9/lovK8NsHnQWLaWfuhOunaQxWhRANCAASucJQqHNeBdUOJluXIuusIZ/NY/fPJ
mFT9sTpSQpXHxtWPFbAtX37Dr/2hrCfbmOxVWjYsbkgHxldBIpmSOfZJ
-----END PRIVATE KEY-----
"""
private let issuerName = "https://keyward.fuzz"
private let ttl: Int64 = 3600
private let now: Int64 = 1_800_000_000

private struct Fixture {
    let verifier: SessionVerifier
    let cachingVerifier: SessionVerifier
    /// Issuers by kid: the active key's, and one as the previous key was when it was active.
    let issuers: [String: SessionIssuer]
}

private let fixture: Fixture = {
    do {
        let active = try ECPrivateKey(pkcs8PEM: activePEM)
        let previous = try ECPrivateKey(pkcs8PEM: previousPEM)
        let keys = try SessionKeySet(active: (kid: "fuzz-k1", key: active), verifyOnly: [(kid: "fuzz-k0", key: previous.publicKey)])
        let oldKeys = try SessionKeySet(active: (kid: "fuzz-k0", key: previous))
        return Fixture(
            verifier: SessionVerifier(keys: keys, issuer: issuerName, maxTTLSeconds: ttl, cacheCapacity: 0),
            cachingVerifier: SessionVerifier(keys: keys, issuer: issuerName, maxTTLSeconds: ttl, cacheCapacity: 8),
            issuers: [
                "fuzz-k1": try SessionIssuer(keys: keys, issuer: issuerName, ttlSeconds: ttl),
                "fuzz-k0": try SessionIssuer(keys: oldKeys, issuer: issuerName, ttlSeconds: ttl),
            ]
        )
    } catch {
        fatalError("fixture: \(error)")
    }
}()

/// The text up to the second dot (the signing input), or nil.
private func signedPart(_ token: String) -> Substring? {
    let bytes = Array(token.utf8)
    guard let first = bytes.firstIndex(of: UInt8(ascii: ".")),
          let second = bytes[(first + 1)...].firstIndex(of: UInt8(ascii: ".")) else { return nil }
    return Substring(String(decoding: bytes[..<second], as: UTF8.self))
}

private func outcome(_ verifier: SessionVerifier, _ token: String) -> Result<SessionClaims, SessionError> {
    Result { () throws(SessionError) -> SessionClaims in try verifier.verify(token, now: now) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSessionToken(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let token = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let f = fixture
    let result = outcome(f.verifier, token)
    let cached = outcome(f.cachingVerifier, token)
    let again = outcome(f.cachingVerifier, token)
    switch (result, cached, again) {
    case (.success(let claims), .success(let c1), .success(let c2)):
        check(claims == c1 && claims == c2, "cached claims differ")
        check(claims.iss == issuerName && claims.exp == claims.iat + ttl, "accepted claims \(claims)")
        guard let platform = SessionPlatform(rawValue: claims.plat) else { check(false, "accepted plat \(claims.plat)"); return 0 }
        // Re-serialize under each kid; exactly one must give back the token's signed part.
        let matches = f.issuers.values.filter { issuer in
            guard let reissued = try? issuer.issue(deviceID: claims.sub, platform: platform, now: claims.iat) else { return false }
            return signedPart(reissued.token) == signedPart(token)
        }
        check(matches.count == 1, "accepted token does not re-serialize to itself: \(token.debugDescription)")
        let signature = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).last.map(Array.init) ?? []
        check(signature.count == 86, "signature segment of \(signature.count) characters accepted")
        let decoded = Base64.decode(String(decoding: signature, as: UTF8.self))
        check(decoded.map { Base64.encodeURL($0) == String(decoding: signature, as: UTF8.self) } == true, "non-canonical signature accepted")
    case (.failure(let e0), .failure(let e1), .failure(let e2)):
        check(e0.reason == e1.reason && e1.reason == e2.reason, "verifiers disagree: \(e0.reason) \(e1.reason) \(e2.reason)")
    default:
        check(false, "verifiers disagree on \(token.debugDescription)")
    }
    return 0
}

// MARK: - Seeds

private func writeSeed(_ directory: String, _ name: String, _ text: String) {
    guard let file = fopen(directory + "/" + name, "wb") else { return }
    _ = Array(text.utf8).withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutableRawPointer) -> CInt {
    let f = fixture
    guard let directory = getenv("KEYWARD_FUZZ_WRITE_SEEDS").map({ String(cString: $0) }) else { return 0 }
    do {
        let valid = try f.issuers["fuzz-k1"]!.issue(deviceID: "ab12cd34", platform: .ios, now: now - 100).token
        let old = try f.issuers["fuzz-k0"]!.issue(deviceID: "device-0", platform: .android, now: now - 10).token
        guard case .success = outcome(f.verifier, valid), case .success = outcome(f.verifier, old) else {
            fatalError("seed tokens do not verify")
        }
        let parts = valid.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func segment(_ json: String) -> String { Base64.encodeURL(Array(json.utf8)) }
        let payload = #"{"iss":"https://keyward.fuzz","sub":"ab12cd34","plat":"ios","iat":1799999900,"exp":1800003500}"#
        var seeds: [String: String] = [
            "valid": valid,
            "valid-previous-key": old,
            "alg-none": segment(#"{"alg":"none","typ":"JWT","kid":"fuzz-k1"}"#) + "." + parts[1] + ".",
            "alg-hs256": segment(#"{"alg":"HS256","typ":"JWT","kid":"fuzz-k1"}"#) + "." + parts[1] + "." + parts[2],
            "kid-unknown": segment(#"{"alg":"ES256","typ":"JWT","kid":"fuzz-k9"}"#) + "." + parts[1] + "." + parts[2],
            "kid-path": segment(#"{"alg":"ES256","kid":"../fuzz-k1"}"#) + "." + parts[1] + "." + parts[2],
            "crit": segment(#"{"alg":"ES256","kid":"fuzz-k1","crit":["exp"]}"#) + "." + parts[1] + "." + parts[2],
            "payload-swapped": parts[0] + "." + segment(payload.replacingAll("ab12cd34", with: "ffffffff")) + "." + parts[2],
            "signature-short": parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(2)),
            "signature-padded": valid + "==",
            "four-segments": valid + ".AAAA",
            "header-only": parts[0],
        ]
        seeds["signature-flipped"] = parts[0] + "." + parts[1] + "." + String(parts[2].dropLast()) + (parts[2].last == "A" ? "Q" : "A")
        for (name, text) in seeds { writeSeed(directory, name, text) }
    } catch {
        fatalError("seeds: \(error)")
    }
    exit(0)
}

private extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
