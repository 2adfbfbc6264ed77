import Foundation

/// `keyward inspect attestation|assertion`: owned by the App Attest work (issue 2).
enum InspectCommand {
    static func run(_ arguments: [String]) -> Int32 {
        FileHandle.standardError.write(Data("keyward inspect: not built yet\n".utf8))
        return 2
    }
}
