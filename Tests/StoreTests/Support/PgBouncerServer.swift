import Foundation
@testable import Store

/// Debian's PgBouncer in transaction pooling mode in front of a test `PostgresServer`, on a free
/// loopback port: a statement may run on any of a few shared server connections, so anything
/// prepared or `SET` for a session would leak to other clients or vanish.
///
/// PgBouncer refuses to run as root: then it runs as the `postgres` system user, as the server does.
final class PgBouncerServer {
    let port: UInt16
    private let directory: TemporaryDirectory
    private let asPostgresUser: Bool

    /// - Parameter serverConnections: server connections per database and user (few, so clients
    ///   genuinely share them).
    init(in front: PostgresServer, serverConnections: Int = 3) throws {
        let binary = "/usr/sbin/pgbouncer"
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw PostgresServer.Failure(description: "pgbouncer not found: install Debian's `pgbouncer` package (scripts/install-deps.sh does)")
        }
        asPostgresUser = getuid() == 0
        directory = try TemporaryDirectory(prefix: "keyward-pgbouncer")
        let path = directory.path
        port = try PostgresServer.freePort()
        try "\"postgres\" \"\"\n".write(toFile: path + "/users.txt", atomically: true, encoding: .utf8)
        try """
            [databases]
            * = host=127.0.0.1 port=\(front.port)
            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(port)
            unix_socket_dir =
            auth_type = trust
            auth_file = \(path)/users.txt
            pool_mode = transaction
            default_pool_size = \(serverConnections)
            max_client_conn = 500
            ; libpq's start-up `options` (Keyward's timeouts) cannot be forwarded by PgBouncer 1.18.
            ignore_startup_parameters = options
            logfile = \(path)/pgbouncer.log
            pidfile = \(path)/pgbouncer.pid

            """.write(toFile: path + "/pgbouncer.ini", atomically: true, encoding: .utf8)
        if asPostgresUser {
            try PostgresServer.run("/bin/chown", ["-R", "postgres:postgres", path], in: path, asPostgres: false)
        }
        try PostgresServer.run(binary, ["-d", path + "/pgbouncer.ini"], in: path, asPostgres: asPostgresUser)
        // -d returns once the daemon forked; wait for it to listen.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? PGConnection(url: url(database: "postgres"), connectTimeoutSeconds: 2)) != nil { return }
            Thread.sleep(forTimeInterval: 0.05)  // the poll interval of a wait the deadline above bounds
        }
        throw PostgresServer.Failure(description: "pgbouncer did not start: \((try? String(contentsOfFile: path + "/pgbouncer.log", encoding: .utf8)) ?? "")")
    }

    /// A libpq URL for `database` through PgBouncer.
    func url(database: String) -> String { "postgresql://postgres@127.0.0.1:\(port)/\(database)" }

    /// Stops the daemon (SIGINT: PgBouncer's immediate shutdown).
    func stop() {
        guard let text = try? String(contentsOfFile: directory.path + "/pgbouncer.pid", encoding: .utf8),
              let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return }
        kill(pid, SIGINT)
    }
}
