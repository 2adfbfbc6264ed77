#if canImport(Glibc)
import Glibc
#endif

/// Names the calling thread for the OS, as `top -H`, `ps -L`, perf and debuggers show it.
///
/// Called first thing on the thread itself. Foundation's `Thread.name` is no substitute: on Linux
/// it reaches the OS only once the `Thread` knows its pthread handle, which the starting thread
/// records after `pthread_create` returns, so a new thread that names itself at once can lose the
/// race and keep the process's name.
///
/// Linux takes the name through `/proc/thread-self/comm` (proc(5); what glibc's
/// `pthread_setname_np`, which Swift's Glibc module does not expose, writes for another thread).
/// A name that cannot be set is no error: the thread runs on under the process's name.
/// - Parameter name: ASCII; Linux keeps 15 bytes (`TASK_COMM_LEN` less the NUL), so a longer name
///   is cut there rather than refused.
package func nameCurrentThread(_ name: String) {
    #if os(Linux)
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    let kept = Array(name.utf8.prefix(15))
    _ = kept.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
    #endif
}
