#pragma once
// JSON as Python writes it: json.dumps (allow_nan=True, the default) emits
// the bare tokens NaN, Infinity and -Infinity, which strict JSON parsers
// reject (Python's json module, "Infinite and NaN Number Values":
// https://docs.python.org/3/library/json.html). W&B's scan_history records
// and TRL's trainer_state.json (json.dumps in TrainerState.save_to_json) can
// hold them; verl's file logger writes with orjson, which writes NaN and
// +-Infinity as null instead (json_history.cpp reads such a null as NaN).
// Here the tokens are rewritten, outside strings, to marker strings that
// `number_of` turns back into NaN / +-inf; everything else is nlohmann_json.
// Syntax errors name the file and line.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <logratio/core/error.hpp>

namespace logratio_cli::trackers {

/// The text with Python's NaN / Infinity / -Infinity (outside strings)
/// replaced by quoted markers; newlines are kept, so line numbers hold.
std::string rewrite_python_json(const std::string& text);

/// Parses `text` (one JSON document; Python's non-finite tokens allowed).
/// `first_line` is the line of `text`'s first character in `file`.
nlohmann::json parse_python_json(const std::string& text, const std::string& file, std::size_t first_line = 1);

/// A JSON value as a scalar number: numbers, booleans (1/0) and the
/// non-finite markers; null is missing (NaN). Anything else (strings,
/// objects, arrays: W&B tables, histograms, media) is not a scalar.
std::optional<double> number_of(const nlohmann::json& v);

/// Whether `text` is one JSON object (Python's non-finite tokens allowed)
/// holding every key of `keys`; false for anything else, invalid JSON included.
bool json_object_has(const std::string& text, const std::string& file, const std::vector<std::string>& keys);

/// The attributes of a config value parsed from JSON (`text`: Python's
/// non-finite tokens allowed) under `key`: objects flattened with '.', W&B's
/// {"value": X} wrapper (with or without "desc") unwrapped, strings as they
/// are, numbers as attributes.hpp writes them, booleans true / false, arrays
/// as compact JSON, null as nothing. Appended to `out` in key order.
void json_config_attributes(const std::string& text, const std::string& file, const std::string& key,
                            std::vector<std::pair<std::string, std::string>>& out);

}  // namespace logratio_cli::trackers
