#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading a configuration or secret file whole, refusing anything that is not a regular file.
///
/// A named pipe, a device or a socket given as a file would block the reader until someone writes
/// to it (forever, for a pipe nobody opens) or never end. The file is opened with `O_NONBLOCK`,
/// which returns at once even for a pipe without a writer, and `fstat(2)` on that descriptor
/// decides: only `S_IFREG` is read. Checking the opened descriptor, not the path, leaves no window
/// for the path to be swapped between the check and the read.
public enum RegularFile {
    /// Why a file was not read; `description` is the reason alone (the caller names the file).
    public enum Failure: Error, CustomStringConvertible, Sendable, Equatable {
        /// `open(2)` failed; the C library's message for `errno`.
        case cannotOpen(String)
        /// The path names something other than a regular file: "a named pipe (FIFO)", "a directory"…
        case notRegular(String)
        /// The file holds more than `limit` bytes.
        case tooLarge(limit: Int)
        /// `read(2)` failed; the C library's message for `errno`.
        case cannotRead(String)

        public var description: String {
            switch self {
            case .cannotOpen(let reason): return "cannot open the file (\(reason))"
            case .notRegular(let kind): return "not a regular file but \(kind); give the path of a file"
            case .tooLarge(let limit): return "file larger than \(limit >> 20) MiB"
            case .cannotRead(let reason): return "cannot read the file (\(reason))"
            }
        }
    }

    /// The bytes of the regular file at `path`, at most `limit` of them.
    /// - Throws: `Failure` when the file cannot be opened, is not a regular file (checked before
    ///   any read, so a FIFO is refused at once), is larger than `limit` or cannot be read.
    public static func read(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw .cannotOpen(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .cannotRead(String(cString: strerror(errno))) }
        let type = status.st_mode & S_IFMT
        guard type == S_IFREG else { throw .notRegular(kind(of: type)) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(String(cString: strerror(errno)))
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { throw .tooLarge(limit: limit) }
        }
    }

    private static func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.read(descriptor, buffer, count)
        #else
        return Darwin.read(descriptor, buffer, count)
        #endif
    }

    /// A file type (`st_mode & S_IFMT`) in words.
    static func kind(of type: mode_t) -> String {
        switch type {
        case S_IFIFO: return "a named pipe (FIFO)"
        case S_IFDIR: return "a directory"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return "a special file"
        }
    }
}
