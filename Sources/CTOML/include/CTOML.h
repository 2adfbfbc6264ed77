#pragma once
// CTOML: a C interface over toml++ (https://marzer.github.io/tomlplusplus/, header-only, C++17).
//
// One call turns TOML text into two plain-text products the Swift side reads without C++:
//   * JSON text for the document (tables → objects, arrays → arrays, strings → strings,
//     integers → integers without a fraction, floats → numbers with '.' or an exponent,
//     booleans → true/false, dates and times → strings in TOML's own notation);
//   * a line map: one record per key and per array element, "<line>\t<path>\n", where <line> is the
//     1-based source line and <path> is the dotted key path rendered as in error messages
//     (bare keys as written, other keys JSON-quoted, array elements as "[i]": `openai.allow[2].path`).
// or, when the text is not valid TOML 1.0, an error message with its line and column.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What `ctoml_parse` returns. Exactly one of `json` and `error` is non-NULL.
/// All buffers are owned by the result: release them with `ctoml_result_free`.
typedef struct ctoml_result {
    /// UTF-8 JSON text (NUL-terminated, `json_length` bytes before the NUL), or NULL on error.
    char *json;
    size_t json_length;
    /// UTF-8 line map (NUL-terminated, `line_map_length` bytes), or NULL on error.
    char *line_map;
    size_t line_map_length;
    /// NUL-terminated, human-readable parse error, or NULL on success.
    char *error;
    /// 1-based position of the error (0 when unknown).
    uint32_t error_line;
    uint32_t error_column;
} ctoml_result;

/// Parses `length` bytes of UTF-8 TOML text (need not be NUL-terminated). Never throws, never aborts:
/// invalid input, non-finite floats and allocation failures all come back as `error`.
ctoml_result ctoml_parse(const char *text, size_t length);

/// Frees the buffers of `result` and sets its pointers to NULL. Safe to call twice.
void ctoml_result_free(ctoml_result *result);

#ifdef __cplusplus
}
#endif
