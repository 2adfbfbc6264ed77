// `keyward-bench`: release benchmarks.
import Foundation

let benchArguments = Array(CommandLine.arguments.dropFirst())
switch benchArguments.first {
case "verify":
    exit(VerifyBenchmark.run(Array(benchArguments.dropFirst())))
case "store":
    exit(StoreBenchmark.run(Array(benchArguments.dropFirst())))
case "upstream":
    exit(UpstreamBenchmark.run(Array(benchArguments.dropFirst())))
case "limits":
    exit(LimitsBenchmark.run(Array(benchArguments.dropFirst())))
case "body-rule":
    exit(BodyRuleBenchmark.run(Array(benchArguments.dropFirst())))
case "handshake":
    exit(HandshakeBenchmark.run(Array(benchArguments.dropFirst())))
default:
    print("usage: keyward-bench verify|handshake|store|limits|upstream|body-rule [flags]   (see bench/README.md)")
    exit(benchArguments.isEmpty ? 2 : (benchArguments.first == "--help" ? 0 : 2))
}
