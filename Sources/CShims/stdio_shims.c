#include <stdio.h>
#include "stdio_shims.h"

void kw_line_buffer_stdout(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
}
