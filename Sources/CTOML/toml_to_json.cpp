// TOML → JSON text + key→line map over toml++ (see include/CTOML.h for the output shapes).
//
// The emitter is written here rather than using toml::json_formatter so that the JSON and the line
// map come from one walk of the tree and so that integers and floats stay distinguishable.

#include "CTOML.h"

#include <stdexcept>

// toml++ guards its parser's internal invariants with TOML_ASSERT, which is assert() in debug builds
// (abort on input that trips a parser bug: found by PropertyTests) and, under NDEBUG, an optimizer
// *assumption* (undefined behaviour when violated). Either is wrong for untrusted configuration text:
// a violated invariant here throws, and ctoml_parse reports it as a parse error instead.
namespace ctoml_detail {
struct internal_check_failed : std::runtime_error {
    using std::runtime_error::runtime_error;
};
[[noreturn]] inline void check_failed(const char *expression) { throw internal_check_failed(expression); }
} // namespace ctoml_detail
#ifdef NDEBUG
#undef NDEBUG // keep TOML_ASSERT_ASSUME a check (see above), never an assumption
#endif
#define TOML_ASSERT(expr) ((expr) ? static_cast<void>(0) : ::ctoml_detail::check_failed(#expr))

#include <toml++/toml.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>
#include <string>
#include <string_view>

namespace {

/// Thrown by the walker for values TOML allows but JSON cannot carry (nan, inf).
struct unsupported_value {
    std::string message;
    uint32_t line;
    uint32_t column;
};

/// Appends `text` as a JSON string literal (RFC 8259 §7): quote, backslash and C0 controls escaped.
void append_json_string(std::string &out, std::string_view text) {
    static const char hex[] = "0123456789abcdef";
    out.push_back('"');
    for (unsigned char c : text) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20 || c == 0x7f) {
                out += "\\u00";
                out.push_back(hex[c >> 4]);
                out.push_back(hex[c & 0xf]);
            } else {
                out.push_back(static_cast<char>(c));
            }
        }
    }
    out.push_back('"');
}

/// True when `key` can be shown bare in a dotted path (TOML 1.0 bare-key alphabet).
bool is_bare_key(std::string_view key) {
    if (key.empty()) return false;
    for (unsigned char c : key) {
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

struct walker {
    std::string json;
    std::string lines;

    void record(const std::string &path, uint32_t line) {
        if (path.empty()) return;
        lines += std::to_string(line);
        lines.push_back('\t');
        lines += path;
        lines.push_back('\n');
    }

    static std::string child_path(const std::string &parent, std::string_view key) {
        std::string path = parent;
        if (!path.empty()) path.push_back('.');
        if (is_bare_key(key)) {
            path.append(key.data(), key.size());
        } else {
            append_json_string(path, key);
        }
        return path;
    }

    void value(const toml::node &node, const std::string &path) {
        switch (node.type()) {
        case toml::node_type::table: {
            const toml::table &table = *node.as_table();
            json.push_back('{');
            bool first = true;
            for (auto &&[key, child] : table) {
                if (!first) json.push_back(',');
                first = false;
                append_json_string(json, key.str());
                json.push_back(':');
                std::string child_at = child_path(path, key.str());
                // The key's own position is where a reader looks; fall back to the value's.
                uint32_t line = key.source().begin.line;
                if (line == 0) line = child.source().begin.line;
                record(child_at, line);
                value(child, child_at);
            }
            json.push_back('}');
            break;
        }
        case toml::node_type::array: {
            const toml::array &array = *node.as_array();
            json.push_back('[');
            for (size_t index = 0; index < array.size(); ++index) {
                if (index > 0) json.push_back(',');
                const toml::node &element = array[index];
                std::string element_at = path + "[" + std::to_string(index) + "]";
                record(element_at, element.source().begin.line);
                value(element, element_at);
            }
            json.push_back(']');
            break;
        }
        case toml::node_type::string:
            append_json_string(json, node.as_string()->get());
            break;
        case toml::node_type::integer:
            json += std::to_string(node.as_integer()->get());
            break;
        case toml::node_type::floating_point: {
            double number = node.as_floating_point()->get();
            if (!std::isfinite(number)) {
                throw unsupported_value{"nan and inf are not supported", node.source().begin.line, node.source().begin.column};
            }
            char buffer[40];
            std::snprintf(buffer, sizeof buffer, "%.17g", number);
            std::string text(buffer);
            if (text.find_first_of(".eE") == std::string::npos) text += ".0";
            json += text;
            break;
        }
        case toml::node_type::boolean:
            json += node.as_boolean()->get() ? "true" : "false";
            break;
        case toml::node_type::date:
        case toml::node_type::time:
        case toml::node_type::date_time: {
            std::ostringstream stream;
            if (auto date = node.as_date()) stream << date->get();
            else if (auto time = node.as_time()) stream << time->get();
            else if (auto date_time = node.as_date_time()) stream << date_time->get();
            append_json_string(json, stream.str());
            break;
        }
        case toml::node_type::none:
            json += "null";
            break;
        }
    }
};

char *copy_out(const std::string &text) {
    char *buffer = static_cast<char *>(std::malloc(text.size() + 1));
    if (buffer == nullptr) return nullptr;
    std::memcpy(buffer, text.data(), text.size());
    buffer[text.size()] = '\0';
    return buffer;
}

ctoml_result failure(const std::string &message, uint32_t line, uint32_t column) {
    ctoml_result result{};
    result.error = copy_out(message);
    result.error_line = line;
    result.error_column = column;
    return result;
}

/// The first line whose end, as a prefix of `source`, already trips the toml++ internal check: the
/// parser reads front to back, so that is where the offending construct is. 0 when none does or the
/// text is too large to search (this runs only on that rare error path).
uint32_t locate_internal_failure(std::string_view source) {
    if (source.size() > (256u << 10)) return 0;
    uint32_t line = 0;
    size_t start = 0;
    while (start < source.size()) {
        size_t newline = source.find('\n', start);
        size_t end = newline == std::string_view::npos ? source.size() : newline + 1;
        ++line;
        try {
            (void)toml::parse(source.substr(0, end), std::string_view{});
        } catch (const ctoml_detail::internal_check_failed &) {
            return line;
        } catch (...) {
        }
        start = end;
    }
    return 0;
}

} // namespace

extern "C" ctoml_result ctoml_parse(const char *text, size_t length) {
    try {
        std::string_view source(text == nullptr ? "" : text, text == nullptr ? 0 : length);
        // A string_view source path: a literal is ambiguous between toml++ 3.3's `parse` overloads (path and source name).
        toml::table root = toml::parse(source, std::string_view{});
        walker walk;
        walk.json.reserve(length + 64);
        walk.value(root, std::string());
        ctoml_result result{};
        result.json = copy_out(walk.json);
        result.line_map = copy_out(walk.lines);
        if (result.json == nullptr || result.line_map == nullptr) {
            ctoml_result_free(&result);
            return failure("out of memory", 0, 0);
        }
        result.json_length = walk.json.size();
        result.line_map_length = walk.lines.size();
        return result;
    } catch (const toml::parse_error &error) {
        return failure(std::string(error.description()), error.source().begin.line, error.source().begin.column);
    } catch (const ctoml_detail::internal_check_failed &) {
        std::string_view source(text, length);
        return failure("malformed value (look for stray brackets, braces or commas)", locate_internal_failure(source), 0);
    } catch (const unsupported_value &error) {
        return failure(error.message, error.line, error.column);
    } catch (const std::bad_alloc &) {
        return failure("out of memory", 0, 0);
    } catch (...) {
        return failure("unexpected error while reading TOML", 0, 0);
    }
}

extern "C" void ctoml_result_free(ctoml_result *result) {
    if (result == nullptr) return;
    std::free(result->json);
    std::free(result->line_map);
    std::free(result->error);
    result->json = nullptr;
    result->line_map = nullptr;
    result->error = nullptr;
    result->json_length = 0;
    result->line_map_length = 0;
}
