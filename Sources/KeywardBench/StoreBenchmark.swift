import Foundation
import Keyward
import KeywardCrypto
import Store
import Synchronization

/// `keyward-bench store`: challenge spends and counter compare-and-sets per second on a store,
/// with several threads, every write succeeding (so the figure is the cost of a real success).
enum StoreBenchmark {
    static let usage = """
        usage: keyward-bench store [--url sqlite:///path.db | postgres://…] [--threads N (2)] [--operations N per thread (20000)]
        Without --url, a SQLite file in a temporary folder. A PostgreSQL database is written to (tables of the
        Keyward schema): point it at a scratch database.
        """

    static func run(_ arguments: [String]) -> Int32 {
        let options: CommandLineOptions
        do { options = try CommandLineOptions(arguments, valueFlags: ["url", "threads", "operations"]) } catch {
            print("\(error)\n\(usage)")
            return 2
        }
        let threads = max(1, Int(options.value("threads") ?? "2") ?? 2)
        let perThread = max(1, Int(options.value("operations") ?? "20000") ?? 20_000)
        let folder = FileManager.default.temporaryDirectory.path + "/keyward-bench-" + Hex.encode(SecureRandom.bytes(6))
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do {
            let url: String
            if let given = options.value("url") {
                url = given
            } else {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                url = "sqlite://\(folder)/bench.db"
            }
            let store = try openStore(url: url)
            let now = Int64(Date().timeIntervalSince1970)
            let total = threads * perThread
            let run = Hex.encode(SecureRandom.bytes(4))  // fresh keys on every run, so a reused database works
            let hashes = (0..<total).map { SHA256.hash(Array("\(run)-\($0)".utf8)) }
            for hash in hashes { try store.putChallenge(hash: hash, expiresAt: now + 600) }
            let devices = try (0..<threads).map { thread -> DeviceRecord in
                let device = DeviceRecord(
                    id: "bench-\(run)-\(thread)", platform: "ios", publicKey: SHA256.hash(Array("key\(thread)".utf8)) + [0],
                    counter: 0, environment: "production", createdAt: now, lastSeenAt: now)
                _ = try store.registerDevice(device)
                return device
            }

            let spent = Atomic<Int>(0)
            let spendSeconds = timed {
                DispatchQueue.concurrentPerform(iterations: threads) { thread in
                    for index in stride(from: thread, to: total, by: threads) {
                        if (try? store.spendChallenge(hash: hashes[index], now: now)) == true { spent.add(1, ordering: .relaxed) }
                    }
                }
            }
            let advanced = Atomic<Int>(0)
            let casSeconds = timed {
                DispatchQueue.concurrentPerform(iterations: threads) { thread in
                    let device = devices[thread]
                    for counter in 1...perThread {
                        let moved = try? store.advanceCounter(deviceID: device.id, publicKey: device.publicKey, to: UInt32(counter), now: now)
                        if moved == true { advanced.add(1, ordering: .relaxed) }
                    }
                }
            }
            let scheme = url.prefix { $0 != ":" }
            print(String(format: "%@, %d threads: %.0f challenge spends/s, %.0f counter CAS/s  (%d/%d spends, %d/%d CAS succeeded)",
                         String(scheme), threads, Double(total) / spendSeconds, Double(total) / casSeconds,
                         spent.load(ordering: .relaxed), total, advanced.load(ordering: .relaxed), total))
            return spent.load(ordering: .relaxed) == total && advanced.load(ordering: .relaxed) == total ? 0 : 1
        } catch {
            print("keyward-bench store: \(error)")
            return 1
        }
    }

    static func timed(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
