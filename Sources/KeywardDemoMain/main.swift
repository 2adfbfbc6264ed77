// The `keyward-demo` executable: the whole story on 127.0.0.1 (`keyward demo` runs this one).
// Kept out of `keyward` so the production binary contains no simulator and no test trust anchor.
import CShims
import Foundation
import KeywardDemo

// Line by line, even into a pipe or a file: `--keep-running` prints its session and then serves
// until stopped, and a supervisor or `tee` must see that before the exit.
kw_line_buffer_stdout()
let arguments = Array(CommandLine.arguments.dropFirst())
// `android-fixture`: the deployment the Android client library's tests drive (clients/android).
if arguments.first == "android-fixture" {
    exit(AndroidClientFixture.run(Array(arguments.dropFirst())))
}
exit(DemoCommand.run(arguments))
