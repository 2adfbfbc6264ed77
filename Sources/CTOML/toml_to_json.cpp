#include "CTOML.h"
