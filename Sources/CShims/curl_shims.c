#include "curl_shims.h"
