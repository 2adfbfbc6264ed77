import KeywardCrypto

/// The App IDs (`<team id>.<bundle id>`) a deployment accepts, with their SHA-256 RP ID hashes
/// computed once (Apple, "Validating apps that connect to your server", attestation step 6,
/// assertion step 4).
struct AppIDSet: Sendable {
    /// App ID and its 32-byte SHA-256.
    let entries: [(appID: String, hash: [UInt8])]

    init(teamID: String, bundleIDs: [String]) {
        entries = bundleIDs.map { bundleID in
            let appID = "\(teamID).\(bundleID)"
            return (appID, SHA256.hash(Array(appID.utf8)))
        }
    }

    /// The App ID whose hash is `rpIDHash`, if it is one of ours.
    func appID(forRPIDHash rpIDHash: [UInt8]) -> String? {
        entries.first { $0.hash == rpIDHash }?.appID
    }
}
