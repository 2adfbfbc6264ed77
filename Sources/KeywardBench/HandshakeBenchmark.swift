import DeviceSimulator
import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import Synchronization

/// `keyward-bench handshake`: App Attest assertions per second through HTTP, each one a full
/// `/v1/assert/ios` — challenge spent in the store, signature verified, counter advanced by a
/// durable compare-and-set, session signed — against a Keyward on loopback with its SQLite store.
///
/// Challenges and assertions are prepared before the clock starts; the measured part is only the
/// assert requests, sent by `--connections` client threads, each owning its devices so that every
/// device's counters arrive in order.
enum HandshakeBenchmark {
    static let usage = "usage: keyward-bench handshake [--devices N (32)] [--per-device N (100)] [--connections N (16)]"

    static func run(_ arguments: [String]) -> Int32 {
        let options: CommandLineOptions
        do { options = try CommandLineOptions(arguments, valueFlags: ["devices", "per-device", "connections"]) } catch {
            print("\(error)\n\(usage)")
            return 2
        }
        let deviceCount = Int(options.value("devices") ?? "32") ?? 32
        let perDevice = Int(options.value("per-device") ?? "100") ?? 100
        let connections = max(1, min(Int(options.value("connections") ?? "16") ?? 16, deviceCount))
        do {
            let deployment = try LocalDeployment(
                providersTOML: """
                    [unused]
                    base_url = "https://api.example.com"
                    secret = "UNUSED_KEY"
                    auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
                    allow = [ { method = "GET", path = "/v1/models" } ]
                    """,
                secrets: ["UNUSED_KEY": "unused"],
                settings: {
                    $0.handshakeBurst = 1_000_000
                    $0.handshakeRatePerSecond = 1_000_000
                    $0.challengeTTLSeconds = 600
                })
            defer { deployment.shutdown() }
            let client = DemoClient(baseURL: deployment.baseURL, client: deployment.upstream)

            print("preparing \(deviceCount) devices × \(perDevice) assertions …")
            var bodies: [[[UInt8]]] = []
            for _ in 0..<deviceCount {
                let device = try deployment.makeDevice()
                let keyID = Base64.encode(device.keyID)
                let challenge = try challengeBytes(client)
                let attestation = try device.attestation(clientDataHash: SHA256.hash(challenge), at: deployment.time.nowSeconds())
                let (attested, _) = try client.postJSON(
                    "/v1/attest/ios", ["key_id": keyID, "attestation": Base64.encode(attestation), "challenge": Base64.encodeURL(challenge)])
                guard attested.status == 200 else { throw BenchFailure("attestation refused: \(attested.status)") }
                var requests: [[UInt8]] = []
                for _ in 0..<perDevice {
                    let challenge = try challengeBytes(client)
                    let assertion = try device.assertion(clientDataHash: SHA256.hash(challenge))
                    let body = try JSONSerialization.data(withJSONObject: [
                        "key_id": keyID, "assertion": Base64.encode(assertion), "challenge": Base64.encodeURL(challenge),
                    ])
                    requests.append(Array(body))
                }
                bodies.append(requests)
            }

            let prepared = bodies
            let latencies = Mutex<[Double]>([])
            let failures = Atomic<Int>(0)
            let start = DispatchTime.now()
            DispatchQueue.concurrentPerform(iterations: connections) { worker in
                var mine: [Double] = []
                for device in stride(from: worker, to: deviceCount, by: connections) {
                    for body in prepared[device] {
                        let sent = DispatchTime.now()
                        let status = (try? client.call("POST", "/v1/assert/ios", headers: [("Content-Type", "application/json")], body: body))?.status
                        mine.append(Double(DispatchTime.now().uptimeNanoseconds - sent.uptimeNanoseconds) / 1e6)
                        if status != 200 { failures.add(1, ordering: .relaxed) }
                    }
                }
                latencies.withLock { $0.append(contentsOf: mine) }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            let sorted = latencies.withLock { $0 }.sorted()
            let total = sorted.count
            func percentile(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(total - 1, Int(Double(total) * p))] }
            print(String(format: "assertions through HTTP: %d in %.2f s = %.0f/s  (p50 %.2f ms, p99 %.2f ms, %d connections, %d not 200)",
                         total, seconds, Double(total) / seconds, percentile(0.5), percentile(0.99), connections,
                         failures.load(ordering: .relaxed)))
            return failures.load(ordering: .relaxed) == 0 ? 0 : 1
        } catch {
            print("keyward-bench handshake: \(error)")
            return 1
        }
    }

    static func challengeBytes(_ client: DemoClient) throws -> [UInt8] {
        let (response, json) = try client.postJSON("/v1/challenge", [:])
        guard response.status == 200, let text = json["challenge"] as? String, let bytes = Base64.decode(text) else {
            throw BenchFailure("challenge refused: \(response.status)")
        }
        return bytes
    }

    struct BenchFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
