#pragma once
// C interface over toml++: see toml_to_json.cpp.
