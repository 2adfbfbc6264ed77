import Foundation
import Synchronization

/// What the SQLite store has learnt about its own writes since the last successful probe: a write
/// that failed because the storage refused it (`SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_READONLY`,
/// `SQLITE_CORRUPT`) leaves the store "not writable" until a probe write commits again; and the
/// database file's identity (device and inode) at open, so a file deleted or replaced under a
/// running process is noticed.
final class SQLiteWriteHealth: Sendable {
    /// Reasons that mean the storage itself refused a write, not a passing lock or a bad argument.
    static let storageFailures: Set<String> = ["sqlite_full", "sqlite_io", "sqlite_readonly", "sqlite_corrupt"]

    /// The latest storage failure not yet cleared by a committed probe, nil when none.
    private let failure = Mutex<StoreError?>(nil)
    /// `st_dev`/`st_ino` of the database file when the store opened it; nil if it could not be read.
    private let identity = Mutex<FileIdentity?>(nil)

    /// The device and inode numbers of one file.
    struct FileIdentity: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    /// - Parameter path: the database file (its identity is read now if it exists).
    init(path: String) {
        recordIdentity(path: path)
    }

    /// Reads the identity of the file at `path` as the one the store uses (once it exists).
    func recordIdentity(path: String) {
        let now = Self.identity(of: path)
        identity.withLock { $0 = now }
    }

    /// Notes `error` if it is a storage failure.
    func note(_ error: StoreError) {
        guard Self.storageFailures.contains(error.reason) else { return }
        failure.withLock { $0 = error }
    }

    /// The storage failure still standing, if any.
    var standingFailure: StoreError? { failure.withLock { $0 } }

    /// A probe write committed: the storage takes writes again.
    func clear() { failure.withLock { $0 = nil } }

    /// Throws `sqlite_file_gone` when the file at `path` is missing or is no longer the file the store
    /// opened (deleted and recreated, or replaced): the process keeps writing to an unlinked inode that
    /// nothing will ever read again.
    func checkFile(path: String) throws(StoreError) {
        guard let identity = identity.withLock({ $0 }) else { return }
        guard let now = Self.identity(of: path) else {
            throw StoreError(.unavailable, "sqlite_file_gone", detail: "the database file is missing (deleted under the running process)")
        }
        guard now == identity else {
            throw StoreError(.unavailable, "sqlite_file_gone", detail: "the database file was replaced under the running process (its inode changed)")
        }
    }

    private static func identity(of path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
