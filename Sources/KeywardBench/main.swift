// `keyward-bench`: release benchmarks.
import Foundation

let benchArguments = Array(CommandLine.arguments.dropFirst())
switch benchArguments.first {
case "verify":
    exit(VerifyBenchmark.run(Array(benchArguments.dropFirst())))
default:
    print("keyward-bench: not yet implemented")
}
