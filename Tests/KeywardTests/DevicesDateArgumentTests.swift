import Foundation
import Store
import XCTest

/// `keyward devices` refuses a date that does not exist the same way wherever a DATE is taken
/// (exit 2, one line naming the flag), instead of rolling it over to another day.
final class DevicesDateArgumentTests: XCTestCase {
    func testImpossibleDatesAreUsageErrorsForDayAndBefore() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let config = try folder.write("keyward.toml", "[store]\nurl = \"sqlite://\(folder.path)/keyward.db\"\n")
        _ = try SQLiteStore(path: folder.path + "/keyward.db")   // devices works on an existing store only
        let impossible = ["2026-02-30", "2027-13-01", "2026-04-31", "2025-02-29", "2026-00-10", "2026-11-29T24:00:00Z", "2026-11-29T13:60:00Z"]
        for date in impossible {
            let usage = try KeywardBinary.run(["devices", "usage", "--config", config, "--day", date])
            XCTAssertEqual(usage.status, 2, date)
            XCTAssertEqual(usage.stderr.trimmingCharacters(in: .newlines), "keyward devices usage: --day: not a date: \(date)")
            let listed = try KeywardBinary.run(["devices", "list", "--config", config, "--before", date])
            XCTAssertEqual(listed.status, 2, date)
            XCTAssertEqual(listed.stderr.trimmingCharacters(in: .newlines), "keyward devices: --before: not a date: \(date)")
        }
        // Days that exist, a leap day among them, are taken.
        for date in ["2024-02-29", "2026-02-28", "2026-12-31", "2026-11-29T23:59:59Z"] {
            let usage = try KeywardBinary.run(["devices", "usage", "--config", config, "--day", date])
            XCTAssertEqual(usage.status, 0, "\(date): \(usage.stderr)")
            let listed = try KeywardBinary.run(["devices", "list", "--config", config, "--before", date])
            XCTAssertEqual(listed.status, 0, "\(date): \(listed.stderr)")
        }
    }
}
