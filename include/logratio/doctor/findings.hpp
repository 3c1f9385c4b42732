#pragma once
// The doctor's result types: a finding per check (id, severity, one-line
// summary, evidence numbers, what to check) and the options of diagnose().
// Plain structs, easy to print, to bind and to turn into JSON.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "../core/version.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

/// not_assessed: the check could not be made (too few tokens, a missing
/// input, superseded by alignment) -- never reported as "ok". It ranks
/// below ok: it raises nothing and leaves the verdict and exit code alone.
enum class severity { not_assessed = -1, ok = 0, warn = 1, fail = 2 };

inline const char* severity_name(severity s) noexcept {
    switch (s) {
        case severity::fail: return "fail";
        case severity::warn: return "warn";
        case severity::ok: return "ok";
        case severity::not_assessed: break;
    }
    return "not assessed";
}

/// warn or fail: what a summary counts and what a report lists.
inline bool raises(severity s) noexcept { return s == severity::warn || s == severity::fail; }

/// One evidence value: a number, or (text non-empty) a word such as a tensor name.
struct evidence_item {
    std::string key;
    double value = 0;
    std::string text;
};

struct finding {
    std::string check;  ///< alignment, filled_values, temperature, ...
    severity level = severity::ok;
    std::string summary;        ///< one line: what was found
    std::string what_to_check;  ///< one line: where to look
    std::vector<evidence_item> evidence;

    finding& num(std::string key, double v) {
        evidence.push_back({std::move(key), v, {}});
        return *this;
    }
    /// Marks the finding not assessed, saying why.
    finding& not_assessed(const std::string& why) {
        level = severity::not_assessed;
        summary = "not assessed: " + why;
        return *this;
    }
    finding& word(std::string key, std::string text) {
        evidence.push_back({std::move(key), 0, std::move(text)});
        return *this;
    }
    /// The evidence value of `key` (NaN when absent or a word).
    double get(const std::string& key) const {
        for (const auto& e : evidence)
            if (e.key == key && e.text.empty()) return e.value;
        return NAN;
    }
};

/// A number for a summary line (%.3g); "n/a" for NaN (a summary never
/// prints NaN as a number or a ratio).
inline std::string g3(double x) {
    if (std::isnan(x)) return "n/a";
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", x);
    return b;
}

inline severity worst(const std::vector<finding>& fs) noexcept {
    severity w = severity::ok;
    for (const auto& f : fs)
        if (f.level > w) w = f.level;
    return w;
}

struct diagnose_options {
    /// Trainer log-probs under the rollout's weights (v.size() entries in the
    /// view's layout, the view's element type): enables the policy_lag check.
    const void* old_logprobs = nullptr;
    unsigned threads = 1;
};

}  // namespace doctor
LOGRATIO_NAMESPACE_END
