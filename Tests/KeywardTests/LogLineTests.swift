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
