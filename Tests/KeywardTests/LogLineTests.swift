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
        XCTAssertEqual(object["ts"] as? Int, 1_700_000_000_123)
        XCTAssertEqual(object["event"] as? String, "request")
        XCTAssertEqual(object["plain"] as? String, "route_unknown")
        XCTAssertEqual(object["tricky"] as? String, "a\"b\\c\nd\u{01}é")
        XCTAssertEqual(object["count"] as? Int, 42)
        XCTAssertFalse(line.rendered.contains("\n"), "one line")
    }

    func testMetricLabelValuesAreEscaped() {
        let metrics = Metrics()
        metrics.increment("keyward_requests_total", ["route": "a\"b", "provider": "x\\y", "status": "200"])
        XCTAssertTrue(metrics.render().contains(#"keyward_requests_total{route="a\"b",provider="x\\y",status="200"} 1"#))
    }
}
