// The `keyward` executable: dispatches to the subcommands of the Keyward module.
import Foundation
import Keyward

let arguments = Array(CommandLine.arguments.dropFirst())
exit(KeywardCommand.run(arguments))
