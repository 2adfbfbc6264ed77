import Foundation
import Keyward

/// `keyward demo`: runs the `keyward-demo` executable that sits beside this one, with the same
/// arguments and in the same process (execv), so signals and the exit code are the demo's own.
///
/// The demo is a separate executable because it carries a simulated iPhone, a fake Play Integrity
/// and a generated test trust anchor, none of which may be linked into the production binary.
enum DemoForwardCommand {
    /// The demo executable's file name, built by `swift build` beside `keyward`.
    static let executableName = "keyward-demo"

    static func run(_ arguments: [String]) -> Int32 {
        let path = siblingPath()
        guard FileManager.default.isExecutableFile(atPath: path) else {
            CLIOutput.error(
                "keyward demo: \(path) not found: the demo is its own executable; build it with "
                    + "`swift build --product keyward-demo`, or run `bash scripts/demo.sh`")
            return 1
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
        CLIOutput.error("keyward demo: cannot run \(path): \(String(cString: strerror(errno)))")
        return 1
    }

    /// `keyward-demo` in the folder of the running executable (/proc/self/exe, so a symlink or a
    /// relative `argv[0]` still finds the real folder).
    static func siblingPath() -> String {
        let running = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? (CommandLine.arguments.first ?? "")
        return URL(fileURLWithPath: running).deletingLastPathComponent().appendingPathComponent(executableName).path
    }
}
