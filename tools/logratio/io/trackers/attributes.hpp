#pragma once
// Run attributes (run_history::attributes) as the readers fill them: text
// values, nested keys joined with '.', numbers written one way whatever the
// source (so `--by actor.lr` finds the same value in a W&B config, a
// TensorBoard hparam and a trainer state), and the W&B config.yaml layout.
//
// Numbers: an integer literal keeps its digits; any other number is written
// as %.17g trimmed to the shortest round trip (std::to_chars: 1e-06, 0.5,
// 0.0003, 64), so YAML's
// "1.0e-06", JSON's "1e-06" and a protobuf double agree. null is no value.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstddef>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <logratio/core/error.hpp>

#include "../files_read.hpp"
#include "../number_text.hpp"

namespace logratio_cli::trackers {

using logratio_cli::number_text;  // io/number_text.hpp

/// Whether `s` is an integer literal ([-+]?[0-9]+).
inline bool is_integer_text(std::string_view s) {
    std::size_t i = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (i == s.size()) return false;
    for (; i < s.size(); ++i)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

/// `s` written as a number if it is one (integers keep their digits, others
/// number_text); false if it is not a number (then `out` is untouched).
inline bool normalized_number(std::string_view s, std::string& out) {
    if (is_integer_text(s)) {
        out.assign(s.substr(s[0] == '+' ? 1 : 0));
        return true;
    }
    if (s.empty() || !(s[0] == '-' || s[0] == '+' || s[0] == '.' || (s[0] >= '0' && s[0] <= '9'))) return false;
    const std::string_view t = s[0] == '+' ? s.substr(1) : s;
    double v = 0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return false;
    out = number_text(v);
    return true;
}

/// Sets one attribute of a run; a key set before with another value takes
/// the new one (the last wins, as W&B's config does) and is remembered in
/// `changed` (the readers say so in a note).
inline void set_attribute(std::map<std::string, std::string>& attributes, const std::string& key, std::string value,
                          std::map<std::string, std::string>* changed = nullptr) {
    auto [it, added] = attributes.emplace(key, value);
    if (added || it->second == value) return;
    if (changed) (*changed)[key] = it->second + " -> " + value;
    it->second = std::move(value);
}

/// A note listing the attributes whose value changed while reading a run.
inline std::string changed_attributes_note(const std::string& what, const std::map<std::string, std::string>& changed) {
    std::string keys;
    for (const auto& [k, v] : changed) keys += (keys.empty() ? "" : ", ") + k + " (" + v + ")";
    return what + ": attribute(s) given twice with different values, the last kept (as W&B does): " + keys;
}

namespace yaml_detail {

inline std::size_t indent_of(const std::string& line) { return line.find_first_not_of(' '); }

/// A YAML scalar as text: quotes removed ('' and \" unescaped), a plain
/// number normalized, null / ~ / empty as no value (false).
inline bool yaml_scalar(std::string s, std::string& out) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
    if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') {
        out.clear();
        for (std::size_t i = 1; i + 1 < s.size(); ++i) {
            out += s[i];
            if (s[i] == '\'' && s[i + 1] == '\'') ++i;
        }
        return true;
    }
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
        out.clear();
        for (std::size_t i = 1; i + 1 < s.size(); ++i) {
            if (s[i] == '\\' && i + 2 < s.size()) {
                const char c = s[++i];
                out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
            } else {
                out += s[i];
            }
        }
        return true;
    }
    if (s.empty() || s == "null" || s == "~" || s == "Null" || s == "NULL") return false;
    if (s == ".nan" || s == ".NaN") return out = "nan", true;
    if (s == ".inf" || s == "+.inf") return out = "inf", true;
    if (s == "-.inf") return out = "-inf", true;
    if (!normalized_number(s, out)) out = s;
    return true;
}

/// The lines of `text` from `i` indented more than `parent` (a block), as
/// flattened attributes under `prefix`; `i` ends past the block. Mappings
/// ("key: value", "key:" + block) nest with '.'; a list ("- item" lines) of
/// scalars becomes "[a, b]"; other list items are passed over.
inline void yaml_block(const std::vector<std::string>& lines, std::size_t& i, long parent, const std::string& prefix,
                       std::map<std::string, std::string>& out, const std::string& path, int depth = 0) {
    if (depth > 64)
        throw logratio::format_error(logratio::detail::concat(path, ": line ", i + 1, ": nested more than 64 levels deep (not W&B's config.yaml)"));
    std::vector<std::string> items;
    bool list = false;
    while (i < lines.size()) {
        const std::string& line = lines[i];
        const std::size_t ind = indent_of(line);
        if (ind == std::string::npos || line[ind] == '#') {
            ++i;
            continue;
        }
        // a block list may sit at its key's own indentation ("key:\n- a")
        if (long(ind) < parent || (long(ind) == parent && line[ind] != '-')) break;
        if (line[ind] == '-' && (line.size() == ind + 1 || line[ind + 1] == ' ')) {
            list = true;
            std::string v;
            if (yaml_scalar(line.substr(std::min(line.size(), ind + 2)), v)) items.push_back(v);
            ++i;
            std::size_t skip = i;  // a nested item (a mapping in the list): passed over
            while (skip < lines.size() && indent_of(lines[skip]) != std::string::npos && indent_of(lines[skip]) > ind) ++skip;
            i = skip;
            continue;
        }
        const auto colon = line.find(": ", ind) != std::string::npos ? line.find(": ", ind)
                                                                    : (line.back() == ':' ? line.size() - 1 : std::string::npos);
        ++i;
        if (colon == std::string::npos) continue;
        std::string key;
        if (!yaml_scalar(line.substr(ind, colon - ind), key)) continue;
        const std::string full = prefix.empty() ? key : prefix + "." + key;
        std::string v;
        if (colon + 1 < line.size() && yaml_scalar(line.substr(colon + 2), v)) {
            if (v == "{}" || v == "[]") continue;
            out[full] = v;
        } else {
            yaml_block(lines, i, long(ind), full, out, path, depth + 1);
        }
    }
    if (list && !items.empty()) {
        std::string joined = "[";
        for (std::size_t k = 0; k < items.size(); ++k) joined += (k ? ", " : "") + items[k];
        out[prefix] = joined + "]";
    }
}

}  // namespace yaml_detail

/// The config.yaml W&B writes in a run's files/ directory (wandb/wandb
/// wandb/sdk/lib/config_util.py: `key: {desc: ..., value: X}` per top-level
/// key, a `wandb_version: 1` line): each key's `value`, nested mappings
/// flattened with '.'; `_wandb` (W&B's own settings) and `desc` skipped.
/// Only that layout is read (block mappings, scalars, lists of scalars).
inline std::map<std::string, std::string> read_wandb_config_yaml(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw logratio::error(path + ": cannot open");
    note_file_read(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(f, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find('\t') != std::string::npos && line.find_first_not_of('\t') != 0)
            throw logratio::format_error(logratio::detail::concat(path, ": line ", lines.size() + 1, ": a tab in the indentation (not W&B's config.yaml)"));
        lines.push_back(std::move(line));
    }
    std::map<std::string, std::string> all, out;
    std::size_t i = 0;
    while (i < lines.size()) {  // a line less indented than the first ends a block: go on after it
        const std::size_t before = i;
        yaml_detail::yaml_block(lines, i, -1, "", all, path);
        if (i == before) ++i;
    }
    // The flattened map has "<key>.value[.<nested>]" and "<key>.desc": keep the values.
    for (const auto& [k, v] : all) {
        const auto dot = k.find('.');
        if (dot == std::string::npos) continue;  // wandb_version
        const std::string key = k.substr(0, dot), rest = k.substr(dot + 1);
        if (key == "_wandb") continue;
        if (rest == "value") out[key] = v;
        else if (rest.compare(0, 6, "value.") == 0) out[key + "." + rest.substr(6)] = v;
    }
    return out;
}

}  // namespace logratio_cli::trackers
