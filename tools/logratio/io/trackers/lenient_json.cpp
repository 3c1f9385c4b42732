#include "lenient_json.hpp"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "attributes.hpp"

#include <logratio/core/error.hpp>

namespace logratio_cli::trackers {

namespace {
const std::string& nan_marker() {
    static const std::string s = std::string(1, '\x01') + "NaN";
    return s;
}
const std::string& inf_marker() {
    static const std::string s = std::string(1, '\x01') + "Infinity";
    return s;
}
const std::string& neg_inf_marker() {
    static const std::string s = std::string(1, '\x01') + "-Infinity";
    return s;
}
bool token_at(const std::string& t, std::size_t i, const char* tok) {
    return t.compare(i, std::char_traits<char>::length(tok), tok) == 0;
}
}  // namespace

/// The text with Python's NaN / Infinity / -Infinity (outside strings)
/// replaced by quoted markers; newlines are kept, so line numbers hold.
std::string rewrite_python_json(const std::string& text) {
    std::string out;
    out.reserve(text.size() + 16);
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            out += c;
            if (c == '\\' && i + 1 < text.size()) out += text[++i];
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        if (c == 'N' && token_at(text, i, "NaN")) {
            out += "\"\\u0001NaN\"";
            i += 2;
        } else if (c == 'I' && token_at(text, i, "Infinity")) {
            out += "\"\\u0001Infinity\"";
            i += 7;
        } else if (c == '-' && token_at(text, i, "-Infinity")) {
            out += "\"\\u0001-Infinity\"";
            i += 8;
        } else {
            out += c;
        }
    }
    return out;
}

/// Parses `text` (one JSON document; Python's non-finite tokens allowed).
/// `first_line` is the line of `text`'s first character in `file`.
nlohmann::json parse_python_json(const std::string& text, const std::string& file, std::size_t first_line) {
    const std::string t = rewrite_python_json(text);
    try {
        return nlohmann::json::parse(t);
    } catch (const nlohmann::json::parse_error& e) {
        std::size_t line = first_line;
        const std::size_t upto = e.byte > 0 ? std::min<std::size_t>(e.byte - 1, t.size()) : 0;
        for (std::size_t i = 0; i < upto; ++i)
            if (t[i] == '\n') ++line;
        throw logratio::format_error(logratio::detail::concat(file, ": line ", line, ": not valid JSON: ", e.what()));
    } catch (const nlohmann::json::exception& e) {
        throw logratio::format_error(logratio::detail::concat(file, ": line ", first_line, ": not valid JSON: ", e.what()));
    }
}

/// A JSON value as a scalar number: numbers, booleans (1/0) and the
/// non-finite markers; null is missing (NaN). Anything else (strings,
/// objects, arrays: W&B tables, histograms, media) is not a scalar.
std::optional<double> number_of(const nlohmann::json& v) {
    if (v.is_number()) return v.get<double>();
    if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s == nan_marker()) return std::numeric_limits<double>::quiet_NaN();
        if (s == inf_marker()) return std::numeric_limits<double>::infinity();
        if (s == neg_inf_marker()) return -std::numeric_limits<double>::infinity();
    }
    return std::nullopt;
}

bool json_object_has(const std::string& text, const std::string& file, const std::vector<std::string>& keys) {
    try {
        const auto j = parse_python_json(text, file);
        if (!j.is_object()) return false;
        for (const auto& k : keys)
            if (!j.contains(k)) return false;
        return true;
    } catch (const logratio::error&) {  // the JSON reader names the place
        return false;
    }
}

namespace {

/// W&B's {"value": X} or {"desc": D, "value": X} (config.yaml's layout, also
/// found in value_json): X.
const nlohmann::json& unwrapped(const nlohmann::json& v) {
    if (!v.is_object() || !v.contains("value") || v.size() > 2 || (v.size() == 2 && !v.contains("desc"))) return v;
    return v.at("value");
}

/// Whether `v` nests at most `left` more levels (bounded recursion: dump()
/// of a value nested thousands deep would exhaust the stack).
bool shallow(const nlohmann::json& v, int left) {
    if (!v.is_structured()) return true;
    if (left == 0) return false;
    for (const auto& x : v) if (!shallow(x, left - 1)) return false;
    return true;
}

void flatten_config(const nlohmann::json& v, const std::string& key, std::vector<std::pair<std::string, std::string>>& out,
                    int depth) {
    const nlohmann::json& u = unwrapped(v);
    if (u.is_object()) {
        if (depth >= 64) return;  // deeper than any config; the rest is not an attribute
        for (const auto& [k, x] : u.items()) flatten_config(x, key.empty() ? k : key + "." + k, out, depth + 1);
    } else if (u.is_string()) {
        const auto n = number_of(u);  // a non-finite marker
        out.emplace_back(key, n ? number_text(*n) : u.get<std::string>());
    } else if (u.is_boolean()) {
        out.emplace_back(key, u.get<bool>() ? "true" : "false");
    } else if (u.is_number_integer()) {
        out.emplace_back(key, u.dump());
    } else if (u.is_number()) {
        out.emplace_back(key, number_text(u.get<double>()));
    } else if (u.is_array() && shallow(u, 16)) {  // deeper arrays are no attribute anyone stratifies on
        out.emplace_back(key, u.dump());
    }
}

}  // namespace

void json_config_attributes(const std::string& text, const std::string& file, const std::string& key,
                            std::vector<std::pair<std::string, std::string>>& out) {
    flatten_config(parse_python_json(text, file), key, out, 0);
}

}  // namespace logratio_cli::trackers
