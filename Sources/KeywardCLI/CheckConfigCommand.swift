import Foundation
import Keyward
import ProviderRegistry
import Upstream

/// `keyward check-config`: like `nginx -t`. Validates keyward.toml, providers.toml and every secret
/// they name, prints each problem (with file and line where it has one) and exits non-zero.
enum CheckConfigCommand {
    static let usage = """
        usage: keyward check-config [--config FILE] [--providers FILE]

        Validates keyward.toml (default ./keyward.toml or $KEYWARD_CONFIG), the providers file it
        names (or --providers FILE), and that every secret they need can be read and parsed as
        `serve` reads it: the session keys (retired ones included), the Android secrets of the
        configured mode, and each provider's key. Nothing is bound or opened but the files. Prints every problem as file:line: key: message. Values of secrets
        are never printed.

        exit codes: 0 everything valid, 1 problems found, 2 usage error
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let options = CLIOutput.options(arguments, command: "check-config", usage: usage, valueFlags: ["config", "providers"])
        else { return 2 }
        if options.has("help") { print(usage); return 0 }
        let secrets = SecretSource()
        var problems: [String] = []
        var providersPath = options.value("providers")

        let configPath = CLIOutput.configPath(options)
        var configuration: KeywardConfiguration?
        if options.value("providers") == nil || options.value("config") != nil || FileManager.default.fileExists(atPath: configPath) {
            do {
                configuration = try KeywardConfiguration.load(path: configPath)
            } catch {
                problems.append(error.description)
            }
        }
        if providersPath == nil { providersPath = configuration?.providersPath }
        if let configuration {
            do { _ = try ServiceAssembly.sessionKeys(secrets) } catch { problems.append("\(configPath): \(error)") }
            do { _ = try ServiceAssembly.adminToken(secrets) } catch { problems.append("\(configPath): \(error)") }
            do { _ = try ServiceAssembly.appKeys(configuration, secrets: secrets) } catch { problems.append("\(configPath): \(error)") }
            // The Android handshake as `serve` builds it: its secrets read and its keys parsed. The
            // client it is given only carries Google calls, and none is made here.
            let upstream = UpstreamClient()
            do { _ = try AndroidAssembly.handshake(configuration, secrets: secrets, upstream: upstream) } catch {
                problems.append("\(configPath): \(error)")
            }
            do { _ = try ServiceAssembly.deviceCheck(configuration, secrets: secrets, upstream: upstream) } catch {
                problems.append("\(configPath): \(error)")
            }
            upstream.shutdown()
            // Not a problem (the exit code stays 0), but never to be left on by accident.
            if let warning = configuration.gateMode.warning { CLIOutput.error("\(configPath): warning: gate.mode: \(warning)") }
            // A range this wide trusts every peer's X-Forwarded-For: any client then picks the
            // address the per-IP handshake limit counts. Valid (a front that hides every address),
            // so only a warning.
            for range in configuration.trustedProxies.ranges where range.prefixLength < 8 {
                CLIOutput.error("\(configPath): warning: listen.trusted_proxies: \(range.network)/\(range.prefixLength) trusts "
                    + "X-Forwarded-For from almost any peer, so clients choose the address the handshake limit counts; "
                    + "list only the addresses of your own proxies")
            }
            // A SQLite store needs a folder to live in. Only a warning: systemd's StateDirectory=
            // creates it when the service starts. A PostgreSQL store is only reached by `migrate`.
            if configuration.storeURL.hasPrefix("sqlite://") {
                let file = String(configuration.storeURL.dropFirst("sqlite://".count))
                let folder = file.contains("/") ? String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) : "."
                var isDirectory: ObjCBool = false
                if !folder.isEmpty, !(FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) && isDirectory.boolValue) {
                    CLIOutput.error("\(configPath): warning: store.url: the folder \(folder) does not exist yet (`migrate` and `serve` need it)")
                } else if let problem = Self.notADatabase(file) {
                    problems.append("\(configPath): store.url: \(problem)")
                } else if let problem = Self.cannotWrite(folder: folder.isEmpty ? "/" : folder, file: file) {
                    CLIOutput.error("\(configPath): warning: store.url: \(problem) (`migrate` and `serve` need to write there)")
                }
            }
        }
        var providerCount = 0
        if let providersPath {
            do {
                let registry = try ProviderRegistry.load(path: providersPath)
                providerCount = registry.names.count
                for warning in registry.warnings { CLIOutput.error(warning.description) }
                // Only iOS sessions can sign requests: with iOS off such a provider refuses everyone.
                if let configuration, configuration.apple == nil {
                    for name in registry.names where registry.providers[name]?.requireAssertion == true {
                        CLIOutput.error("\(providersPath): warning: [\(name)] require_assertion: iOS is off in "
                            + "\(configPath) ([apple] missing), so every call to this provider is refused (403)")
                    }
                }
                do { _ = try ProviderTable.resolve(registry, secrets: secrets) } catch {
                    problems += error.problems
                }
            } catch {
                problems.append(error.description)
            }
        }
        if problems.isEmpty {
            print("keyward check-config: ok (\(configuration == nil ? "" : configPath + ", ")\(providersPath ?? "-"): \(providerCount) provider\(providerCount == 1 ? "" : "s"))")
            return 0
        }
        let lines = problems.flatMap { $0.split(separator: "\n").map(String.init) }
        for line in lines { CLIOutput.error(line) }
        CLIOutput.error("keyward check-config: \(lines.count) problem\(lines.count == 1 ? "" : "s")")
        return 1
    }

    /// Why this process could not write the SQLite store at `file` in `folder`, or nil when it can:
    /// a probe file is created and removed in the folder (SQLite also creates its -wal and -shm
    /// files there), and an existing database must open for writing. Permission bits alone do not
    /// say (root passes them on read-only file systems).
    /// Why `serve` could not open `file` as its SQLite store, when something is already there:
    /// a directory or another non-regular file, or a file that is neither empty (SQLite makes a
    /// new database in it) nor starts with SQLite's 16-byte header "SQLite format 3\0" (the
    /// database file format, section 1.3). nil when it is absent or looks like a database.
    static func notADatabase(_ file: String) -> String? {
        var status = stat()
        guard stat(file, &status) == 0 else { return nil }
        guard (status.st_mode & S_IFMT) == S_IFREG else { return "\(file) is not a regular file (a directory?); give the database file's path" }
        if status.st_size == 0 { return nil }
        let descriptor = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }  // unreadable: the write check below names it
        defer { close(descriptor) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = read(descriptor, &header, header.count)
        let sqliteHeader = Array("SQLite format 3".utf8) + [0]
        return count == 16 && header == sqliteHeader ? nil : "\(file) exists and is not a SQLite database"
    }

    static func cannotWrite(folder: String, file: String) -> String? {
        let probe = folder + "/.keyward-check-config-\(getpid())"
        let created = open(probe, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard created >= 0 else { return "cannot create files in \(folder): \(String(cString: strerror(errno)))" }
        close(created)
        unlink(probe)
        if FileManager.default.fileExists(atPath: file) {
            let database = open(file, O_RDWR | O_CLOEXEC)
            guard database >= 0 else { return "cannot open \(file) for writing: \(String(cString: strerror(errno)))" }
            close(database)
        }
        return nil
    }
}
