import Dispatch
import Foundation
import Synchronization
import TestWaiting
import XCTest
@testable import Upstream
import KeywardSupport

/// A handler that says "full" stops the upstream being read: bytes in flight stay bounded, and
/// after each resume every byte still arrives, in order.
final class BackPressureTests: XCTestCase {
    /// The test stream: its own 8-byte word indices, little-endian, so any lost, duplicated or
    /// reordered byte shows.
    private static func pattern(bytes: Int) -> [UInt8] {
        let words = (0..<(bytes / 8)).map { UInt64($0).littleEndian }
        return words.withUnsafeBytes { Array($0) }
    }

    /// Resident set size in bytes (/proc/self/statm, second field, in pages).
    private static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    func testPausedTransferStopsReadingAndDeliversEveryByteInOrderAfterResume() throws {
        let total = 32 << 20          // 32 MiB streamed
        let pauseEvery = 2 << 20      // the handler reports "full" after each 2 MiB
        let inFlightBound = 16 << 20  // socket buffers + libcurl's buffer stay well under this
        let stream = Self.pattern(bytes: total)
        let connection = Locked<TestConnection?>(nil)
        let server = try TestUpstreamServer { _, conn in
            connection.withLock { $0 = conn }
            conn.write("HTTP/1.1 200 OK\r\nContent-Length: \(total)\r\n\r\n")
            var offset = 0
            while offset < total {
                let end = min(offset + (1 << 20), total)
                guard conn.write(Array(stream[offset..<end])) else { return }
                offset = end
            }
        }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        let paused = DispatchSemaphore(value: 0)
        let mismatch = Atomic<Int>(-1)
        let nextPause = Atomic<Int>(pauseEvery)
        let handler = RecordingHandler(keepBody: false, bodyDecision: { before, chunk in
            let matches = before + chunk.count <= total && stream.withUnsafeBytes { expected in
                memcmp(expected.baseAddress! + before, chunk.baseAddress!, chunk.count) == 0
            }
            if !matches { _ = mismatch.compareExchange(expected: -1, desired: before, ordering: .relaxed) }
            let after = before + chunk.count
            guard after >= nextPause.load(ordering: .relaxed), after < total else { return true }
            nextPause.store(after + pauseEvery, ordering: .relaxed)
            paused.signal()
            return false
        })
        let residentBefore = Self.residentBytes()
        let transfer = client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/big"), handler: handler)
        var residentPeak = residentBefore

        var pauses = 0
        var largestInFlight = 0
        let giveUp = Date().addingTimeInterval(60)
        while handler.snapshot.completions == 0 && Date() < giveUp {
            // Every pause is answered, however late the last one comes; completion ends the loop.
            guard paused.wait(timeout: .now() + 0.1) == .success else { continue }
            pauses += 1
            // While paused, the server writes until the socket buffers fill, then blocks in send().
            var written = connection.withLock { $0?.bytesWritten } ?? 0
            var stalled = false
            for _ in 0..<40 where !stalled {
                Thread.sleep(forTimeInterval: 0.05)  // the sampling interval of "no progress": the measurement itself
                let now = connection.withLock { $0?.bytesWritten } ?? 0
                stalled = now == written
                written = now
            }
            XCTAssertTrue(stalled, "the server kept writing for 2 s while the transfer was paused")
            largestInFlight = max(largestInFlight, written - handler.bytesSeen)
            residentPeak = max(residentPeak, Self.residentBytes())
            transfer.resume()
        }
        XCTAssertTrue(handler.waitForCompletion(timeout: 1))

        XCTAssertNil(handler.snapshot.error)
        XCTAssertEqual(handler.bytesSeen, total)
        XCTAssertEqual(mismatch.load(ordering: .relaxed), -1, "first wrong byte offset")
        XCTAssertGreaterThanOrEqual(pauses, 10)
        XCTAssertLessThan(largestInFlight, inFlightBound)
        XCTAssertLessThan(residentPeak - residentBefore, 16 << 20, "resident memory grew with the stream")
        print("back-pressure: \(pauses) pauses, at most \(largestInFlight) bytes in flight, RSS +\((residentPeak - residentBefore) >> 10) KiB")
    }

    func testIdleTimerDoesNotRunWhileTheHandlerHoldsThePause() throws {
        let server = try TestUpstreamServer { _, conn in
            conn.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            conn.writeChunk(Array("first".utf8))
            Thread.sleep(forTimeInterval: 0.05)  // a paced upstream: the behaviour under test
            conn.writeChunk(Array("second".utf8))
            conn.write("0\r\n\r\n")
        }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        let handler = RecordingHandler(bodyDecision: { before, _ in before > 0 })  // pause after the first chunk
        let transfer = client.start(
            UpstreamRequest(url: "http://127.0.0.1:\(server.port)/", idleTimeoutMs: 200), handler: handler)
        Thread.sleep(forTimeInterval: 0.6)  // three idle windows, paused by the consumer, not the upstream
        XCTAssertEqual(handler.snapshot.completions, 0)
        transfer.resume()
        XCTAssertTrue(handler.waitForCompletion())

        XCTAssertNil(handler.snapshot.error)
        XCTAssertEqual(handler.snapshot.body, Array("firstsecond".utf8))
    }
}

extension BackPressureTests {
    func testIdleTimerRunsAgainFromTheResumeAndCutsASilentUpstream() throws {
        let server = try TestUpstreamServer { _, conn in
            conn.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            conn.writeChunk(Array("only".utf8))
            _ = conn.waitForPeerClose(timeout: 5)  // then silent
        }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        let handler = RecordingHandler(bodyDecision: { _, _ in false })  // pause on the first chunk
        let transfer = client.start(
            UpstreamRequest(url: "http://127.0.0.1:\(server.port)/", idleTimeoutMs: 200), handler: handler)
        XCTAssertTrue(waitUntil { handler.snapshot.body == Array("only".utf8) }, "the first chunk never came")
        XCTAssertTrue(
            staysFalse(for: 0.5) { handler.snapshot.completions > 0 },
            "timed out while the handler held the pause (two idle windows and more)")
        let resumed = Date()
        transfer.resume()
        XCTAssertTrue(handler.waitForCompletion(timeout: 5))

        let record = handler.snapshot
        XCTAssertEqual(record.error, .timeout)
        XCTAssertEqual(record.afterHead, true)
        let silence = try XCTUnwrap(record.completedAt).timeIntervalSince(resumed)
        XCTAssertGreaterThanOrEqual(silence, 0.19, "the idle window counts from the resume")
        XCTAssertLessThan(silence, 1.0, "the idle timer did not run again after the resume")
    }

    func testResumeThatRacesAheadOfThePauseStillResumes() throws {
        // A consumer that drains instantly may call resume() before upstreamBody has returned false:
        // resume is level-triggered, so the transfer must not stall.
        let body = [UInt8](repeating: 0x5A, count: 4 << 20)
        let server = try TestUpstreamServer { _, conn in conn.respond(status: 200, body: body) }
        defer { server.stop() }
        let client = UpstreamClient()
        defer { client.shutdown() }

        final class EagerHandler: UpstreamResponseHandler, @unchecked Sendable {
            var transfer: UpstreamTransfer?
            let recorder = RecordingHandler(keepBody: false)
            let ready = DispatchSemaphore(value: 0)
            var waited = false
            func upstreamHead(status: Int, headers: [(String, String)]) {
                if !waited { ready.wait(); waited = true }
                recorder.upstreamHead(status: status, headers: headers)
            }
            func upstreamBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
                _ = recorder.upstreamBody(chunk)
                transfer?.resume()
                return false
            }
            func upstreamComplete(_ error: UpstreamError?, afterHead: Bool) { recorder.upstreamComplete(error, afterHead: afterHead) }
        }
        let handler = EagerHandler()
        handler.transfer = client.start(UpstreamRequest(url: "http://127.0.0.1:\(server.port)/"), handler: handler)
        handler.ready.signal()

        XCTAssertTrue(handler.recorder.waitForCompletion(timeout: 20))
        XCTAssertNil(handler.recorder.snapshot.error)
        XCTAssertEqual(handler.recorder.bytesSeen, body.count)
    }
}
