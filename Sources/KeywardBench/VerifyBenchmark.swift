import AppAttest
import Foundation
import KeywardCrypto

/// `keyward-bench verify [--seconds S] [--vectors DIR]`: App Attest verification throughput on one
/// core over the real vectors (`Tests/Fixtures/vectors/appattest`), next to the OpenSSL floor measured in
/// the same run.
///
/// - attestations/s: every `valid` attestation vector, round-robin, through `AttestationVerifier.verify`
///   (one verifier per configuration, kept across calls, so the chain verifier's memo of Apple's
///   intermediate is in play — validity is still checked at each call).
/// - assertions/s: every `valid` assertion vector through `AssertionVerifier.verify` with the key as
///   65-byte X9.62 bytes (the server's form), and with an already parsed `ECPublicKey`.
/// - floor: one P-384 ECDSA verification (what an attestation costs with the memo) and one P-256
///   ECDSA verification (what an assertion costs), straight through KeywardCrypto.
/// Build with `-c release`; run it once, not in a loop (the machine is shared).
enum VerifyBenchmark {
    static func run(_ arguments: [String]) -> Int32 {
        var seconds = 3.0
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tests/Fixtures/vectors/appattest").standardizedFileURL.path
        var index = 0
        while index < arguments.count {
            switch (arguments[index], index + 1 < arguments.count ? arguments[index + 1] : nil) {
            case ("--seconds", let value?): seconds = Double(value) ?? seconds
            case ("--vectors", let value?): directory = value
            default:
                FileHandle.standardError.write(Data("usage: keyward-bench verify [--seconds S] [--vectors DIR]\n".utf8))
                return 2
            }
            index += 2
        }
        let work: Workload
        do {
            work = try Workload.load(directory: directory)
        } catch {
            FileHandle.standardError.write(Data("keyward-bench verify: \(error)\n".utf8))
            return 1
        }
        print("keyward-bench verify: 1 thread, best of 5 interleaved windows over \(seconds) s per figure, \(work.attestations.count) real attestations, "
              + "\(work.assertions.count) real assertions from \(directory)")

        // Sanity first: every input must verify, or the figures mean nothing.
        for case let item in work.attestations where (try? item.run()) == nil {
            print("attestation \(item.name) does not verify"); return 1
        }
        for case let item in work.assertions where (try? item.runBytes()) == nil {
            print("assertion \(item.name) does not verify"); return 1
        }

        // Interleaved rounds, best of each: the machine is shared, so the fastest window is the one
        // least disturbed by other processes, and the floor sees the same disturbance as the code.
        let floor = Floor.make()
        let rounds = 5
        var best = [Double](repeating: 0, count: 5)
        for _ in 0..<rounds {
            let window = seconds / Double(rounds)
            let rates = [
                measure(seconds: window, count: work.attestations.count) { _ = try? work.attestations[$0].run() },
                measure(seconds: window, count: 1) { _ in _ = floor.p384.key.isValidSignature(der: floor.p384.signature, message: floor.message) },
                measure(seconds: window, count: work.assertions.count) { _ = try? work.assertions[$0].runBytes() },
                measure(seconds: window, count: work.assertions.count) { _ = try? work.assertions[$0].runParsed() },
                measure(seconds: window, count: 1) { _ in _ = floor.p256.key.isValidSignature(der: floor.p256.signature, message: floor.message) },
            ]
            for index in best.indices { best[index] = max(best[index], rates[index]) }
        }
        let (attestationRate, p384Rate, assertionRate, assertionParsedRate, p256Rate) = (best[0], best[1], best[2], best[3], best[4])

        // Where an attestation's and an assertion's time goes, one component at a time.
        let sample = work.attestations[0]
        let leafDER = (try? AttestationObject(bytes: sample.bytes))?.certificates.first ?? []
        let intermediateDER = (try? AttestationObject(bytes: sample.bytes))?.certificates.last ?? []
        let decodeRate = measure(seconds: seconds / 4, count: 1) { _ in _ = try? AttestationObject(bytes: sample.bytes) }
        let certificateRate = measure(seconds: seconds / 4, count: 1) { _ in _ = try? X509Certificate(der: leafDER) }
        let intermediateRate = measure(seconds: seconds / 4, count: 1) { _ in _ = try? X509Certificate(der: intermediateDER) }
        let keyImportRate = measure(seconds: seconds / 4, count: 1) { _ in _ = try? ECPublicKey(x962: work.assertions[0].publicKey) }

        func line(_ label: String, _ rate: Double, _ note: String) -> String {
            label.padding(toLength: 44, withPad: " ", startingAt: 0) + String(format: "%9.0f /s   ", rate) + note
        }
        print(line("attestations/s", attestationRate, "target >= 700"))
        print(line("assertions/s (key as X9.62 bytes)", assertionRate, "target >= 8000"))
        print(line("assertions/s (key already parsed)", assertionParsedRate, ""))
        print(line("OpenSSL floor: P-384 ECDSA verify", p384Rate, "1 per attestation with the intermediate memo (2 without)"))
        print(line("OpenSSL floor: P-256 ECDSA verify", p256Rate, "1 per assertion"))
        print(line("  component: attestation object decode", decodeRate, "CBOR + authenticatorData"))
        print(line("  component: X509Certificate(der:) leaf", certificateRate, ""))
        print(line("  component: X509Certificate(der:) interm.", intermediateRate, ""))
        print(line("  component: ECPublicKey(x962:) import", keyImportRate, ""))
        print(String(format: "ratios: attestations %.2f x P-384 floor, assertions %.2f x P-256 floor",
                     attestationRate / p384Rate, assertionRate / p256Rate))
        return 0
    }

    /// Calls `body(i)` for i cycling over 0..<count until `seconds` have passed; returns calls per second.
    static func measure(seconds: Double, count: Int, _ body: (Int) -> Void) -> Double {
        for index in 0..<count { body(index) }  // warm-up: memo filled, caches hot
        let clock = ContinuousClock()
        let start = clock.now
        let limit = Duration.milliseconds(Int64(seconds * 1000))
        var calls = 0
        var elapsed = Duration.zero
        while elapsed < limit {
            for index in 0..<count { body(index) }
            calls += count
            elapsed = clock.now - start
        }
        let components = elapsed.components
        return Double(calls) / (Double(components.seconds) + Double(components.attoseconds) / 1e18)
    }
}

/// The real vectors, decoded once, with the verifiers they need.
private struct Workload {
    struct Attestation {
        let name: String
        let verifier: AttestationVerifier
        let bytes: [UInt8], keyID: [UInt8], clientDataHash: [UInt8], at: Int64
        func run() throws -> AttestedKey {
            try verifier.verify(attestation: bytes, keyID: keyID, clientDataHash: clientDataHash, at: at)
        }
    }

    struct Assertion {
        let name: String
        let verifier: AssertionVerifier
        let bytes: [UInt8], publicKey: [UInt8], parsedKey: ECPublicKey, clientDataHash: [UInt8], stored: UInt32, appID: String
        func runBytes() throws -> UInt32 {
            try verifier.verify(assertion: bytes, publicKey: publicKey, clientDataHash: clientDataHash, storedCounter: stored, appID: appID)
        }
        func runParsed() throws -> UInt32 {
            try verifier.verify(assertion: bytes, publicKey: parsedKey, clientDataHash: clientDataHash, storedCounter: stored, appID: appID)
        }
    }

    struct LoadError: Error, CustomStringConvertible {
        let description: String
    }

    var attestations: [Attestation] = []
    var assertions: [Assertion] = []

    static func load(directory: String) throws -> Workload {
        var work = Workload()
        var verifiers: [String: AttestationVerifier] = [:]
        let folders = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        for folder in folders {
            let params = "\(directory)/\(folder)/params.json"
            guard let data = FileManager.default.contents(atPath: params) else { continue }
            guard let vectors = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
                throw LoadError(description: "\(params): not a JSON array")
            }
            let folderTeam = vectors.lazy.compactMap { $0["team_id"] as? String }.first
            let folderBundle = vectors.lazy.compactMap { $0["bundle_id"] as? String }.first
            for (index, vector) in vectors.enumerated() where vector["expect"] as? String == "valid" {
                let name = "\(folder)#\(index)"
                guard let file = vector["file"] as? String,
                      let text = FileManager.default.contents(atPath: "\(directory)/\(folder)/\(file)"),
                      let bytes = Base64.decode(String(decoding: text, as: UTF8.self).filter { !$0.isWhitespace }),
                      let team = vector["team_id"] as? String ?? folderTeam,
                      let bundle = vector["bundle_id"] as? String ?? folderBundle,
                      let hashHex = vector["client_data_hash_hex"] as? String, let clientDataHash = Hex.decode(hashHex)
                else { throw LoadError(description: "\(name): incomplete vector") }
                if vector["kind"] as? String == "attestation" {
                    guard let keyIDText = vector["key_id_b64"] as? String, let keyID = Base64.decode(keyIDText),
                          let at = (vector["verify_at_unix"] as? NSNumber)?.int64Value,
                          let environment = AppAttestEnvironment(rawValue: vector["environment"] as? String ?? "")
                    else { throw LoadError(description: "\(name): incomplete attestation vector") }
                    let configuration = "\(team) \(bundle) \(environment)"
                    let verifier = verifiers[configuration]
                        ?? AttestationVerifier(teamID: team, bundleIDs: [bundle], environment: environment)
                    verifiers[configuration] = verifier
                    work.attestations.append(Attestation(name: name, verifier: verifier, bytes: bytes, keyID: keyID,
                                                         clientDataHash: clientDataHash, at: at))
                } else {
                    guard let keyText = vector["public_key_x962_b64"] as? String, let publicKey = Base64.decode(keyText),
                          let parsedKey = try? ECPublicKey(x962: publicKey)
                    else { throw LoadError(description: "\(name): incomplete assertion vector") }
                    let stored = (vector["previous_counter"] as? NSNumber)?.uint32Value ?? 0
                    work.assertions.append(Assertion(name: name, verifier: AssertionVerifier(teamID: team, bundleIDs: [bundle]),
                                                     bytes: bytes, publicKey: publicKey, parsedKey: parsedKey,
                                                     clientDataHash: clientDataHash, stored: stored, appID: "\(team).\(bundle)"))
                }
            }
        }
        guard !work.attestations.isEmpty, !work.assertions.isEmpty else { throw LoadError(description: "no vectors in \(directory)") }
        return work
    }
}

/// One fresh signature per curve, verified repeatedly: the cost OpenSSL itself sets.
private struct Floor {
    let message: [UInt8]
    let p384: (key: ECPublicKey, signature: [UInt8])
    let p256: (key: ECPublicKey, signature: [UInt8])

    static func make() -> Floor {
        let message = [UInt8](repeating: 0x5a, count: 32)
        do {
            let k384 = try ECPrivateKey.generate(.p384), k256 = try ECPrivateKey.generate(.p256)
            return Floor(message: message, p384: (k384.publicKey, try k384.signatureDER(message: message)),
                         p256: (k256.publicKey, try k256.signatureDER(message: message)))
        } catch {
            preconditionFailure("cannot make benchmark keys: \(error)")
        }
    }
}
