import CShims

/// Keeps glibc's allocator from handing memory back to the kernel after every request.
///
/// A proxied request allocates and frees a few hundred KiB (libcurl's easy handle and buffers,
/// the response stream). With glibc's defaults those blocks are mmap'd and unmapped, or the heap
/// top is trimmed, every time, so each request paid page faults and their zeroing: on
/// `bench/proxy.sh`'s setup, 245,000 page faults in 4 s and ~30% more CPU per request than with
/// the limits below (413 page faults). Memory stays bounded: freed blocks are reused.
enum AllocatorTuning {
    /// 64 MiB mmap and trim thresholds, 16 MiB heap padding. Call once, before serving.
    static func applyForServer() {
        _ = kw_tune_allocator(64 << 20, 16 << 20)
    }
}
