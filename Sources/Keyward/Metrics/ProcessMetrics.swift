import Foundation

/// The standard `process_*` series of Prometheus client libraries, read from Linux's `/proc`
/// when `/metrics` is rendered (on the admin listener, never on the proxy's loops), and
/// `keyward_build_info`.
enum ProcessMetrics {
    /// This build's version (`keyward_build_info{version}`).
    static let version = "0.1.0"

    /// The source revision: `$KEYWARD_REVISION` when the process started (the Containerfile sets it
    /// from its `REVISION` build argument), else "unknown".
    static let revision: String = {
        let value = ProcessInfo.processInfo.environment["KEYWARD_REVISION"] ?? ""
        let clean = value.utf8.count <= 64 && value.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x2E || $0 == 0x2D }
        return value.isEmpty || !clean ? "unknown" : value
    }()

    /// The exposition lines: build info, resident memory (bytes), open and maximum file
    /// descriptors, CPU seconds (user + system) and the start time (Unix seconds).
    static func render() -> String {
        var out = "# HELP keyward_build_info The running build: version and source revision.\n# TYPE keyward_build_info gauge\n"
        out += "keyward_build_info{version=\"\(version)\",revision=\"\(revision)\"} 1\n"
        let pageSize = Int64(sysconf(Int32(_SC_PAGESIZE)))
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        if let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
           let resident = statm.split(separator: " ").dropFirst().first.flatMap({ Int64($0) }) {
            out += gauge("process_resident_memory_bytes", "Resident memory size in bytes.", String(resident * pageSize))
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            // The listing itself holds one descriptor open while it runs.
            out += gauge("process_open_fds", "Number of open file descriptors.", String(max(0, entries.count - 1)))
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            out += gauge("process_max_fds", "Maximum number of open file descriptors.", String(limit.rlim_cur))
        }
        if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
           let close = stat.lastIndex(of: ")") {
            // Fields after the command name (which may hold spaces): state is field 3; utime 14,
            // stime 15 and starttime 22 (clock ticks; starttime since boot), proc(5).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 19, let user = Double(fields[11]), let system = Double(fields[12]) {
                out += "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
                out += "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total \((user + system) / ticks)\n"
                if let startTicks = Double(fields[19]), let boot = bootTime() {
                    out += gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                                 String(format: "%.2f", boot + startTicks / ticks))
                }
            }
        }
        return out
    }

    private static func gauge(_ name: String, _ help: String, _ value: String) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(value)\n"
    }

    /// `btime` of `/proc/stat`: when the machine booted, Unix seconds.
    private static func bootTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6))
        }
        return nil
    }
}
