#pragma once

/// Makes the process's standard output line-buffered (setvbuf `_IOLBF`): Swift 6 cannot name the
/// C global `stdout` without tripping its concurrency checks.
void kw_line_buffer_stdout(void);
