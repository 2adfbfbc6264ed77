import Foundation
@testable import Store

/// A throwaway PostgreSQL server for tests: `initdb` into a temporary directory, `pg_ctl start` on
/// 127.0.0.1 with a free port (socket in the same directory), `stop()` at the end.
///
/// initdb refuses to run as root, and CI runs as root: then every server command runs as the
/// `postgres` system user (`runuser -u postgres --`), which owns the directory. The binaries are
/// found in `$PG_BIN` or `/usr/lib/postgresql/<version>/bin` (Debian's `postgresql` package).
final class PostgresServer {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let port: UInt16
    private let directory: TemporaryDirectory
    private let binaries: String
    private let asPostgresUser: Bool
    private var dataDirectory: String { directory.path + "/data" }

    /// A libpq URL for `database` on this server (trust authentication, loopback only).
    func url(database: String = "postgres") -> String { "postgresql://postgres@127.0.0.1:\(port)/\(database)" }

    init() throws {
        guard let binaries = PostgresServer.findBinaries() else {
            throw Failure(description: """
                PostgreSQL server binaries not found (looked in $PG_BIN and /usr/lib/postgresql/*/bin): \
                install Debian's `postgresql` package (scripts/install-deps.sh does) to run PostgresStore tests
                """)
        }
        self.binaries = binaries
        asPostgresUser = getuid() == 0
        directory = try TemporaryDirectory(prefix: "keyward-pg")
        let path = directory.path
        let asPostgres = asPostgresUser
        func run(_ executable: String, _ arguments: [String]) throws {
            try PostgresServer.run(executable, arguments, in: path, asPostgres: asPostgres)
        }
        if asPostgres {
            try PostgresServer.run("/bin/chown", ["postgres:postgres", path], in: path, asPostgres: false)
        }
        try run(binaries + "/initdb", [
            "-D", directory.path + "/data", "--username=postgres", "--auth=trust",
            "--encoding=UTF8", "--locale=C", "--no-sync",
        ])
        var lastError: (any Error)?
        for _ in 0..<3 {   // a free port can be taken between probing and binding: try another
            let candidate = try PostgresServer.freePort()
            do {
                try run(binaries + "/pg_ctl", [
                    "-D", directory.path + "/data", "-l", directory.path + "/server.log", "-w", "-t", "60",
                    "-o", "-p \(candidate) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
                    "start",
                ])
                port = candidate
                return
            } catch {
                lastError = error
            }
        }
        throw lastError ?? Failure(description: "pg_ctl start failed")
    }

    /// Stops the server (fast shutdown) and removes its directory.
    func stop() {
        _ = try? PostgresServer.run(binaries + "/pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "stop"],
                                    in: directory.path, asPostgres: asPostgresUser)
    }

    /// Creates an empty database and returns its URL.
    func createDatabase(_ name: String) throws -> String {
        let admin = try PGConnection(url: url(), connectTimeoutSeconds: 5)
        try admin.execute("CREATE DATABASE \(name)")
        return url(database: name)
    }

    /// Runs a command to completion with `posix_spawn` and `waitpid`, output to a file.
    ///
    /// Not Foundation's `Process`: on Linux it notices a child's exit through a descriptor the child
    /// inherits, and the postmaster that `pg_ctl start` leaves behind would hold it open forever. Here
    /// the child gets the output file as stdout/stderr, /dev/null as stdin, and no other descriptor
    /// (so the daemon cannot hold the test runner's pipes open either).
    static func run(_ executable: String, _ arguments: [String], in directory: String, asPostgres: Bool) throws {
        let argv = asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] + arguments : [executable] + arguments
        let outputPath = directory + "/command.out"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // closefrom_np does not import into Swift: close every other open descriptor one by one.
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
        for descriptor in open where descriptor > 2 && fcntl(descriptor, F_GETFD) != -1 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }

        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, environ)
        guard spawned == 0 else { throw Failure(description: "cannot start \(argv[0]): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED && WEXITSTATUS == 0, spelled out (the C macros do not import).
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            throw Failure(description: "\(executable) \(arguments.first ?? "") failed (status \(status)): \(text)\n\(log.suffix(2_000))")
        }
    }

    private static func findBinaries() -> String? {
        var candidates: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["PG_BIN"] { candidates.append(explicit) }
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        candidates += versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "\(root)/\($0)/bin" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") && FileManager.default.isExecutableFile(atPath: $0 + "/pg_ctl") }
    }

    /// A loopback TCP port nobody listens on right now (bind to port 0, read what the kernel chose).
    static func freePort() throws -> UInt16 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic -> Int32 in
                guard bind(socket, generic, length) == 0 else { return -1 }
                return getsockname(socket, generic, &length)
            }
        }
        guard bound == 0 else { throw Failure(description: "bind() failed") }
        return UInt16(bigEndian: address.sin_port)
    }
}
