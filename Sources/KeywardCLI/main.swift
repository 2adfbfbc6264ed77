// The `keyward` executable: dispatches to its subcommands (`KeywardCommand`).
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
exit(KeywardCommand.run(arguments))
