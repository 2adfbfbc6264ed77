// Tiny C functions for what Swift cannot call: variadic setters and function-like macros.
// One header per C library; each is owned by the Swift module that uses it.
#include "openssl_shims.h"
#include "curl_shims.h"
#include "server_shims.h"
#include "allocator_shims.h"
#include "stdio_shims.h"
#include "signal_shims.h"
