#include "openssl_shims.h"
