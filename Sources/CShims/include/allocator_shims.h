#pragma once
// glibc's mallopt, which Swift's Glibc module does not import (malloc.h).

/// Raises glibc's mmap and trim thresholds to `threshold_bytes` and pads heap growth by
/// `top_pad_bytes`, so large short-lived blocks are reused instead of returned to the kernel.
/// Returns 1 when every setting was accepted.
int kw_tune_allocator(long threshold_bytes, long top_pad_bytes);
