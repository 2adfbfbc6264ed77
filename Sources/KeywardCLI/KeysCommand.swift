import Foundation
import Keyward
import KeywardCrypto
import Sessions

/// `keyward keys generate|rotate|kid`: the session signing key (ES256, P-256, PKCS#8 PEM).
enum KeysCommand {
    static let usage = """
        usage: keyward keys generate [--out FILE [--force]]
               keyward keys rotate --key-file FILE --retired-file FILE
               keyward keys kid --key-file FILE

        generate  writes a new P-256 private key (PKCS#8 PEM) to FILE (mode 0600; an existing FILE is
                  kept unless --force) or standard output, and prints its key id (kid, RFC 7638
                  thumbprint) on standard error. Point KEYWARD_SESSION_KEY_FILE at FILE.
        rotate    appends the current key's public half to the retired file, then replaces the key
                  file with a new key. If the running instance was started with
                  KEYWARD_SESSION_KEY_FILE at the key file and KEYWARD_SESSION_KEYS_RETIRED_FILE at
                  the retired file, SIGHUP it: new sessions are signed with the new key, sessions
                  signed with the old one keep working until they expire. A SIGHUP re-reads those
                  files but never the environment: if the instance was started without
                  KEYWARD_SESSION_KEYS_RETIRED_FILE (or with other files), restart it with both set,
                  because a SIGHUP would sign with the new key and refuse every session of the old
                  one (401 kid_unknown). After one session TTL, the retired file can be emptied.
                  With several instances this is not enough (one would sign with a key the others
                  do not know yet): follow README, "Rotating the session key".
        kid       prints the key id of a key file.

        exit codes: 0 done, 1 failure, 2 usage error
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let options = CLIOutput.options(arguments, command: "keys", usage: usage, valueFlags: ["out", "key-file", "retired-file"], switchFlags: ["force"], positional: 1...1)
        else { return 2 }
        if options.has("help") { print(usage); return 0 }
        do {
            switch options.positional.first {
            case "generate" where options.positional.count == 1:
                let key = try ECPrivateKey.generate(.p256)
                let pem = try key.pkcs8PEM
                if let out = options.value("out") {
                    guard options.has("force") || !FileManager.default.fileExists(atPath: out) else {
                        CLIOutput.error("keyward keys generate: \(out) exists (it may be a live key); use --force to replace it")
                        return 1
                    }
                    try writePrivate(pem, to: out)
                } else {
                    print(pem, terminator: pem.hasSuffix("\n") ? "" : "\n")
                }
                CLIOutput.error("kid \(SessionKeySet.thumbprintKID(for: key.publicKey))")
                return 0
            case "rotate" where options.positional.count == 1:
                let keyFile = try options.required("key-file")
                let retiredFile = try options.required("retired-file")
                if namesTheSameFile(keyFile, retiredFile) {
                    throw CommandLineOptions.UsageError("--key-file and --retired-file name the same file (\(keyFile)); "
                        + "rotating would replace the retired public key with the new private key, so give --retired-file another file")
                }
                let current = try readKey(keyFile)
                let retired = (try? String(contentsOfFile: retiredFile, encoding: .utf8)) ?? ""
                try writePrivate(retired + pem(current.publicKey), to: retiredFile)
                let next = try ECPrivateKey.generate(.p256)
                try writePrivate(try next.pkcs8PEM, to: keyFile)
                print("retired kid \(SessionKeySet.thumbprintKID(for: current.publicKey)) (kept for verification in \(retiredFile))")
                print("active  kid \(SessionKeySet.thumbprintKID(for: next.publicKey)) (\(keyFile))")
                // A SIGHUP re-reads the files the process was started with, never its environment.
                print("SIGHUP an instance started with KEYWARD_SESSION_KEY_FILE=\(keyFile) and "
                    + "KEYWARD_SESSION_KEYS_RETIRED_FILE=\(retiredFile) to sign with it; one started without "
                    + "that retired file needs a restart with both set, or its sessions are refused (401 kid_unknown)")
                return 0
            case "kid" where options.positional.count == 1:
                let key = try readKey(try options.required("key-file"))
                print(SessionKeySet.thumbprintKID(for: key.publicKey))
                return 0
            default:
                CLIOutput.error("keyward keys: expected generate, rotate or kid\n\n\(usage)")
                return 2
            }
        } catch let usageError as CommandLineOptions.UsageError {
            CLIOutput.error("keyward keys: \(usageError)\n\n\(usage)")
            return 2
        } catch {
            CLIOutput.error("keyward keys: " + CLIOutput.oneLine(error))
            return 1
        }
    }

    /// The session key in `path`.
    /// - Throws: `ServiceAssembly.Problem`, one line naming the file and what to do.
    static func readKey(_ path: String) throws(ServiceAssembly.Problem) -> ECPrivateKey {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read (check its permissions)" : "does not exist"
            throw ServiceAssembly.Problem("the key file \(path) \(reason); give --key-file the session key's file "
                + "(KEYWARD_SESSION_KEY_FILE), or make one with `keyward keys generate --out FILE`")
        }
        do { return try ECPrivateKey(pkcs8PEM: text) } catch {
            throw ServiceAssembly.Problem("the key file \(path) is not a PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----); "
                + "give --key-file the session key's file, as `keyward keys generate` writes it")
        }
    }

    /// Whether `first` and `second` are one file: equal resolved paths (`realpath(3)`, so a
    /// symbolic link meets its target; a file not made yet resolves through its folder), or, when
    /// both exist, the same device and inode (a hard link).
    static func namesTheSameFile(_ first: String, _ second: String) -> Bool {
        if resolved(first) == resolved(second) { return true }
        var a = stat(), b = stat()
        guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// `path` with symbolic links, `.` and `..` resolved; for a file that does not exist yet, its
    /// resolved folder and its name; as given when neither resolves.
    private static func resolved(_ path: String) -> String {
        if let real = realpath(path, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        let url = URL(fileURLWithPath: path)
        guard let folder = realpath(url.deletingLastPathComponent().path, nil) else { return url.standardizedFileURL.path }
        defer { free(folder) }
        return String(cString: folder) + "/" + url.lastPathComponent
    }

    /// A public key as a SubjectPublicKeyInfo PEM block.
    static func pem(_ key: ECPublicKey) -> String {
        let body = Base64.encode(key.spkiDER)
        var lines = ["-----BEGIN PUBLIC KEY-----"]
        var index = body.startIndex
        while index < body.endIndex {
            let end = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[index..<end]))
            index = end
        }
        lines.append("-----END PUBLIC KEY-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes `text` readable by the owner only (0600), replacing the file atomically.
    static func writePrivate(_ text: String, to path: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ServiceAssembly.Problem("cannot write \(path); check that its folder exists and is writable")
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw ServiceAssembly.Problem("cannot replace \(path); check that its folder is writable")
        }
    }
}
