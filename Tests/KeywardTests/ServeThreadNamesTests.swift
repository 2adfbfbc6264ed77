import Foundation
import HTTPServer
import Keyward
import KeywardDemo
import TestWaiting
import XCTest

/// Every thread `keyward serve` runs carries its role's name for the OS (`top -H`, perf, gdb), as
/// the thread table of `Shard` lists them.
final class ServeThreadNamesTests: XCTestCase {
    func testEveryThreadOfServeIsNamedForItsRole() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        guard let serve = try ServeProcess.startedWithIdleProvider(in: folder) else { return }
        defer { serve.stop() }

        let shards = min(16, HTTPServerConfiguration.onlineCores())
        var expected = ["kw-google": 1, "kw-store-watch": 1, "kw-admissions": 1, "kw-checkpoint": 1]
        for index in 0..<shards { expected["kw-shard-\(index)"] = 1 }
        for index in 0..<4 { expected["kw-store-\(index)"] = 1 }
        var seen: [String: Int] = [:]
        // Each thread names itself as it starts; "started" is logged once the listeners are up,
        // which the store's threads need not have reached yet.
        let named = waitUntil(timeout: 10) {
            seen = Self.threadNames(of: serve.process.processIdentifier)
            return expected.allSatisfy { seen[$0.key] == $0.value }
        }
        XCTAssertTrue(named, "threads by name: \(seen.sorted { $0.key < $1.key })")
        XCTAssertNil(seen["kw-upstream"], "a loop left under the client's default name")
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(), 0)
    }

    /// How many threads of process `pid` carry each name (`/proc/PID/task/TID/comm`).
    private static func threadNames(of pid: Int32) -> [String: Int] {
        let tasks = "/proc/\(pid)/task"
        var names: [String: Int] = [:]
        for tid in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let comm = try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8) else { continue }
            names[comm.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += 1
        }
        return names
    }
}
