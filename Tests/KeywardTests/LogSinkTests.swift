import Foundation
import Keyward
import KeywardDemo
import TestWaiting
import XCTest

final class LogSinkTests: XCTestCase {
    func testBufferedSinkWritesWhenFullAndOnFlushInOrder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/log"
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        let read = { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

        let sink = BufferedLogSink(target: FileDescriptorLogSink(descriptor: descriptor), intervalMillis: 60_000, maxBufferedBytes: 64)
        sink.write(line: "{\"n\":1}")
        sink.write(line: "{\"n\":2}")
        XCTAssertEqual(read(), "", "short lines wait for the batch")
        let long = "{\"n\":3,\"pad\":\"" + String(repeating: "x", count: 60) + "\"}"
        sink.write(line: long)
        XCTAssertEqual(read(), "{\"n\":1}\n{\"n\":2}\n" + long + "\n", "a full buffer is written at once")
        sink.write(line: "{\"n\":4}")
        sink.flush()
        XCTAssertEqual(read(), "{\"n\":1}\n{\"n\":2}\n" + long + "\n{\"n\":4}\n")
    }

    func testBufferedSinkFlushesOnItsOwnWithinTheInterval() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/log"
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        defer { close(descriptor) }
        let sink = BufferedLogSink(target: FileDescriptorLogSink(descriptor: descriptor), intervalMillis: 20)
        sink.write(line: "{\"n\":1}")
        var content = ""
        XCTAssertTrue(waitUntil(timeout: 2) {
            content = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            return !content.isEmpty
        }, "the sink never flushed on its own")
        XCTAssertEqual(content, "{\"n\":1}\n")
    }

    func testEachBatchIsFlushedOnItsOwnAfterAnEarlierOneWas() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/log"
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        defer { close(descriptor) }
        let read = { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        let sink = BufferedLogSink(target: FileDescriptorLogSink(descriptor: descriptor), intervalMillis: 20)
        sink.write(line: "{\"n\":1}")
        XCTAssertTrue(waitUntil(timeout: 2) { read() == "{\"n\":1}\n" }, "the first batch was never flushed")
        // The buffer is empty again: the next line schedules its own flush.
        sink.write(line: "{\"n\":2}")
        sink.write(line: "{\"n\":3}")
        XCTAssertTrue(
            waitUntil(timeout: 2) { read() == "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n" },
            "a batch after a flush was never written: \(read())")
    }
}
