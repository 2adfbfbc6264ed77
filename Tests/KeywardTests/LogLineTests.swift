import Foundation
import Keyward
import KeywardDemo
import XCTest

final class LogLineTests: XCTestCase {
    func testFieldsAreValidJSONWhateverTheyHold() throws {
        var line = LogLine(event: "request", timeMillis: 1_700_000_000_123)
        line.add("plain", "route_unknown")
        line.add("tricky", "a\"b\\c\nd\u{01}é")
        line.add("count", 42)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.rendered.utf8)) as? [String: Any])
        XCTAssertEqual(object["time"] as? String, "2023-11-14T22:13:20.123Z")
        XCTAssertEqual(object["event"] as? String, "request")
        XCTAssertEqual(object["plain"] as? String, "route_unknown")
        XCTAssertEqual(object["tricky"] as? String, "a\"b\\c\nd\u{01}é")
        XCTAssertEqual(object["count"] as? Int, 42)
        XCTAssertFalse(line.rendered.contains("\n"), "one line")
    }

    /// The exact text of a line: control characters as `\uXXXX` in lowercase hex, except the
    /// short forms for `\n`, `\r` and `\t`; other bytes (DEL, non-ASCII) as they are.
    func testEscapesAndNumbersAreWrittenExactly() {
        var line = LogLine(event: "e", timeMillis: 1_700_000_000_007)
        line.add("controls", "\u{00}\u{01}\u{08}\u{0B}\u{0C}\u{1A}\u{1F}\u{7F}\t\r\n")
        line.add("quotes", "say \"hi\" \\ é 😀")
        line.add("zero", 0)
        line.add("negative", Int64.min)
        line.add("large", Int64.max)
        XCTAssertEqual(
            line.rendered,
            #"{"time":"2023-11-14T22:13:20.007Z","event":"e","controls":"\u0000\u0001\u0008\u000b\u000c\u001a\u001f\#u{7F}\t\r\n","#
                + #""quotes":"say \"hi\" \\ é 😀","zero":0,"negative":-9223372036854775808,"large":9223372036854775807}"#)
    }

    /// RFC 3339 times agree with Foundation's ISO 8601 formatter across leap days, year ends, the
    /// epoch and before it.
    func testTimesAreRFC3339InUTCWithMilliseconds() throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let samples: [Int64] = [0, 1, 999, -1, -86_400_000, 951_782_400_000, 951_868_799_999, 1_709_164_800_500,
                                4_102_444_799_999, 1_700_000_000_123, 253_402_300_799_999]
        for millis in samples {
            let line = LogLine(event: "x", timeMillis: millis)
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.rendered.utf8)) as? [String: Any])
            let time = try XCTUnwrap(object["time"] as? String)
            let expected = formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
            XCTAssertEqual(time, expected, "\(millis)")
        }
    }

    func testMetricLabelValuesAreEscaped() {
        let metrics = Metrics()
        metrics.increment("keyward_requests_total", ["route": "a\"b", "provider": "x\\y", "status": "200"])
        XCTAssertTrue(metrics.render().contains(#"keyward_requests_total{route="a\"b",provider="x\\y",status="200"} 1"#))
    }
}
