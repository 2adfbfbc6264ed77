import Keyward
import XCTest

/// The flag parser every `keyward` subcommand shares: a flag given twice is a usage error naming
/// it, unless the subcommand declares it repeatable.
final class CommandLineOptionsTests: XCTestCase {
    func testAValueFlagGivenTwiceIsAUsageErrorNamingIt() {
        for arguments in [["--device", "dev-a", "--device", "dev-b"], ["--device=dev-a", "--device", "dev-b"], ["--device", "dev-a", "--device=dev-a"]] {
            XCTAssertThrowsError(try CommandLineOptions(arguments, valueFlags: ["device", "ttl"])) { error in
                XCTAssertEqual((error as? CommandLineOptions.UsageError)?.description, "--device given more than once; give it once", "\(arguments)")
            }
        }
    }

    func testASwitchGivenTwiceIsAUsageErrorNamingIt() {
        XCTAssertThrowsError(try CommandLineOptions(["--force", "--force"], valueFlags: [], switchFlags: ["force"])) { error in
            XCTAssertEqual((error as? CommandLineOptions.UsageError)?.description, "--force given more than once; give it once")
        }
    }

    func testARepeatableFlagKeepsEveryValueInOrder() throws {
        let options = try CommandLineOptions(["--package", "a.b", "--mode", "classic", "--package=c.d"],
                                             valueFlags: ["mode"], repeatableFlags: ["package"])
        XCTAssertEqual(options.values["package"], ["a.b", "c.d"])
        XCTAssertEqual(options.value("mode"), "classic")
        XCTAssertEqual(options.value("package"), "c.d")
    }
}
