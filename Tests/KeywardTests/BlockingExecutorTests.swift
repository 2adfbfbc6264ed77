import Foundation
@testable import Keyward
import Synchronization
import TestWaiting
import XCTest

/// The Android handshake's executor: bounded threads, a bounded queue, nothing lost.
final class BlockingExecutorTests: XCTestCase {
    func testRunsEveryJobWithAtMostItsThreadsAtOnce() {
        let executor = BlockingExecutor(name: "kw-test", threads: 3, queueLimit: 100)
        let running = Mutex((now: 0, most: 0))
        let done = Atomic<Int>(0)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<20 {
            XCTAssertTrue(executor.submit {
                running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                release.wait()
                running.withLock { $0.now -= 1 }
                done.add(1, ordering: .relaxed)
            })
        }
        XCTAssertTrue(waitUntil(timeout: 5) { running.withLock { $0.now } == 3 }, "three jobs never ran at once")
        for _ in 0..<20 { release.signal() }
        XCTAssertTrue(waitUntil(timeout: 5) { done.load(ordering: .relaxed) == 20 }, "not every job ran")
        XCTAssertEqual(running.withLock { $0.most }, 3)
    }

    func testRefusesAJobBeyondTheQueueLimitAndTakesMoreOnceItDrains() {
        let executor = BlockingExecutor(name: "kw-test", threads: 1, queueLimit: 2)
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let done = Atomic<Int>(0)
        let job: @Sendable () -> Void = {
            started.signal()
            release.wait()
            done.add(1, ordering: .relaxed)
        }
        XCTAssertTrue(executor.submit(job))  // runs
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success)
        XCTAssertTrue(executor.submit(job))  // waits
        XCTAssertTrue(executor.submit(job))  // waits
        XCTAssertFalse(executor.submit(job), "a third waiting job was accepted")
        for _ in 0..<3 { release.signal() }
        XCTAssertTrue(waitUntil(timeout: 5) { done.load(ordering: .relaxed) == 3 })
        XCTAssertTrue(executor.submit { done.add(1, ordering: .relaxed) })
        XCTAssertTrue(waitUntil(timeout: 5) { done.load(ordering: .relaxed) == 4 })
    }
}
