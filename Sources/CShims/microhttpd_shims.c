#include "microhttpd_shims.h"
