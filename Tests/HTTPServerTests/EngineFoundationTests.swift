import CShims
import Foundation
import HTTP1Codec
@testable import HTTPServer
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The server engine's parts below the connection: read buffer, body framing, output queue, poller.
final class EngineReadBufferTests: XCTestCase {
    private func receive(_ buffer: ReadBuffer, _ bytes: [UInt8]) -> Int {
        let space = buffer.spaceForReceive()
        let taken = min(space.count, bytes.count)
        space.copyBytes(from: bytes[..<taken])
        buffer.didReceive(taken)
        return taken
    }

    func testHoldsNoMemoryUntilTheFirstReceiveAndFourKiBAfterIt() {
        let buffer = ReadBuffer(maxCapacity: 16 * 1024)
        XCTAssertEqual(buffer.capacity, 0)
        XCTAssertEqual(receive(buffer, Array("GET / HTTP/1.1\r\n".utf8)), 16)
        XCTAssertEqual(buffer.capacity, 4096)
        XCTAssertEqual(Array(buffer.unconsumed), Array("GET / HTTP/1.1\r\n".utf8))
    }

    func testGrowsOnlyWhenUnconsumedBytesFillItAndNeverPastItsMaximum() {
        let buffer = ReadBuffer(maxCapacity: 10_000)
        let pattern = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        var received = 0
        while true {
            let taken = receive(buffer, Array(pattern[received...]))
            if taken == 0 { break }
            received += taken
        }
        XCTAssertEqual(received, 10_000, "a head bigger than the maximum is never held")
        XCTAssertEqual(buffer.capacity, 10_000)
        XCTAssertEqual(Array(buffer.unconsumed), Array(pattern[..<10_000]))
        XCTAssertEqual(buffer.spaceForReceive().count, 0)
    }

    func testConsumedBytesMakeRoomWithoutGrowing() {
        let buffer = ReadBuffer(maxCapacity: 64 * 1024)
        let first = [UInt8](repeating: 0x61, count: 4096)
        XCTAssertEqual(receive(buffer, first), 4096)
        buffer.consume(4000)
        XCTAssertEqual(receive(buffer, [UInt8](repeating: 0x62, count: 100)), 100)
        XCTAssertEqual(buffer.capacity, 4096, "96 unconsumed bytes were moved to the front, not grown around")
        XCTAssertEqual(Array(buffer.unconsumed), [UInt8](repeating: 0x61, count: 96) + [UInt8](repeating: 0x62, count: 100))
    }

    func testAnIdleConnectionGivesItsBufferBack() {
        let buffer = ReadBuffer(maxCapacity: 16 * 1024)
        XCTAssertEqual(receive(buffer, Array("abc".utf8)), 3)
        buffer.releaseIfEmpty()
        XCTAssertEqual(buffer.capacity, 4096, "bytes still unconsumed keep the buffer")
        buffer.consume(3)
        buffer.releaseIfEmpty()
        XCTAssertEqual(buffer.capacity, 0)
        XCTAssertEqual(buffer.count, 0)
        XCTAssertEqual(receive(buffer, Array("d".utf8)), 1)
        XCTAssertEqual(Array(buffer.unconsumed), Array("d".utf8))
    }
}

final class EngineBodyFramerTests: XCTestCase {
    private func wire(_ framer: inout BodyFramer, _ pieces: [String]) -> String {
        var out: [[UInt8]] = []
        for piece in pieces { framer.frame(Array(piece.utf8), into: &out) }
        return String(decoding: out.joined(), as: UTF8.self)
    }

    func testChunkedPiecesAreFramedAndEndWithTheLastChunk() {
        var framer = BodyFramer(.chunked)
        XCTAssertEqual(wire(&framer, ["hello", "", "0123456789abcdef!"]), "5\r\nhello\r\n11\r\n0123456789abcdef!\r\n")
        XCTAssertEqual(framer.finish(), .complete(Array("0\r\n\r\n".utf8)))
    }

    func testADeclaredLengthIsNeverExceededAndAShortBodyIsATruncation() {
        var framer = BodyFramer(.contentLength(8))
        XCTAssertEqual(wire(&framer, ["abcde"]), "abcde")
        XCTAssertEqual(framer.finish(), .truncated)
        XCTAssertEqual(wire(&framer, ["fghij", "k"]), "fgh")
        XCTAssertEqual(framer.remaining, 0)
        XCTAssertEqual(framer.finish(), .complete([]))
    }

    func testHTTP10BodiesEndWithTheConnectionAndBodilessAnswersSendNothing() {
        var untilClose = BodyFramer(.untilClose)
        XCTAssertEqual(wire(&untilClose, ["one ", "two"]), "one two")
        XCTAssertEqual(untilClose.finish(), .closeConnection)
        var none = BodyFramer(.none)
        XCTAssertEqual(wire(&none, ["body of a HEAD answer"]), "")
        XCTAssertEqual(none.finish(), .complete([]))
    }
}

/// A connected, non-blocking pair of local stream sockets.
private func socketPair() -> (Int32, Int32) {
    var fds: [Int32] = [-1, -1]
    precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
    for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    return (fds[0], fds[1])
}

private func readAvailable(_ fd: Int32) -> [UInt8] {
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let got = read(fd, &chunk, chunk.count)
        if got <= 0 { return out }
        out += chunk[..<got]
    }
}

final class EngineOutputQueueTests: XCTestCase {
    func testPiecesLeaveInOrderInOneGatheringSend() {
        let (ours, theirs) = socketPair()
        defer { close(ours); close(theirs) }
        var queue = OutputQueue()
        for piece in ["HTTP/1.1 200 OK\r\n\r\n", "5\r\n", "hello", "\r\n"] { queue.append(Array(piece.utf8)) }
        queue.append([])
        XCTAssertEqual(queue.count, 29)
        XCTAssertEqual(queue.send(to: ours), .drained)
        XCTAssertTrue(queue.isEmpty)
        XCTAssertEqual(String(decoding: readAvailable(theirs), as: UTF8.self), "HTTP/1.1 200 OK\r\n\r\n5\r\nhello\r\n")
    }

    func testAFullSocketBlocksWithTheRestKeptThenDrainsInOrder() {
        let (ours, theirs) = socketPair()
        defer { close(ours); close(theirs) }
        var queue = OutputQueue()
        let pattern = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) }
        for start in stride(from: 0, to: pattern.count, by: 100_000) {
            queue.append(Array(pattern[start..<min(start + 100_000, pattern.count)]))
        }
        XCTAssertEqual(queue.send(to: ours), .wouldBlock, "4 MiB cannot fit in a local socket's buffers")
        XCTAssertGreaterThan(queue.count, 0)
        var received: [UInt8] = []
        let deadline = Date() + 10
        while received.count < pattern.count && Date() < deadline {
            received += readAvailable(theirs)
            let result = queue.send(to: ours)
            XCTAssertNotEqual(result, .failed)
        }
        XCTAssertEqual(received.count, pattern.count)
        XCTAssertTrue(received == pattern, "bytes reordered or lost")
        XCTAssertTrue(queue.isEmpty)
    }

    func testAPeerThatHasGoneFailsTheSendWithoutASignal() {
        let (ours, theirs) = socketPair()
        defer { close(ours) }
        close(theirs)
        var queue = OutputQueue()
        queue.append(Array("late answer".utf8))
        XCTAssertEqual(queue.send(to: ours), .failed)
    }
}

final class EnginePollerTests: XCTestCase {
    func testAWakeFromAnotherThreadEndsTheWait() throws {
        let poller = try XCTUnwrap(Poller())
        XCTAssertFalse(poller.wait(timeoutMilliseconds: 0) { _ in XCTFail("nothing is registered") })
        let waker = poller
        Thread.detachNewThread { waker.wake() }
        var woken = false
        let deadline = Date() + 5
        while !woken && Date() < deadline {
            woken = poller.wait(timeoutMilliseconds: 1000) { _ in }
        }
        XCTAssertTrue(woken)
        XCTAssertFalse(poller.wait(timeoutMilliseconds: 0) { _ in }, "the wake is reset once seen")
    }

    func testReadinessCarriesTheTokenAndAPeerThatLeftIsSeenAsGone() throws {
        let poller = try XCTUnwrap(Poller())
        let (ours, theirs) = socketPair()
        defer { close(ours) }
        XCTAssertTrue(poller.add(ours, interest: KW_POLL_IN | KW_POLL_RDHUP, token: 42))
        var seen: [Poller.Readiness] = []
        poller.wait(timeoutMilliseconds: 0) { seen.append($0) }
        XCTAssertEqual(seen, [], "nothing to read yet")
        var byte: UInt8 = 7
        XCTAssertEqual(write(theirs, &byte, 1), 1)
        poller.wait(timeoutMilliseconds: 1000) { seen.append($0) }
        XCTAssertEqual(seen.map(\.token), [42])
        XCTAssertEqual(seen.map(\.isReadable), [true])
        XCTAssertEqual(seen.map(\.peerGone), [false])
        XCTAssertEqual(readAvailable(ours), [7])
        close(theirs)
        seen = []
        poller.wait(timeoutMilliseconds: 1000) { seen.append($0) }
        XCTAssertEqual(seen.map(\.token), [42])
        XCTAssertEqual(seen.map(\.peerGone), [true])
        poller.remove(ours)
        seen = []
        poller.wait(timeoutMilliseconds: 0) { seen.append($0) }
        XCTAssertEqual(seen, [], "a removed descriptor is not reported")
    }
}
