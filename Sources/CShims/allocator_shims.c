#include "allocator_shims.h"
#include <malloc.h>

int kw_tune_allocator(long threshold_bytes, long top_pad_bytes) {
    int ok = 1;
    ok &= mallopt(M_MMAP_THRESHOLD, (int)threshold_bytes);
    ok &= mallopt(M_TRIM_THRESHOLD, (int)threshold_bytes);
    ok &= mallopt(M_TOP_PAD, (int)top_pad_bytes);
    return ok;
}
