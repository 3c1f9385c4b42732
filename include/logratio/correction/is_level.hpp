#pragma once
// The level of an importance-sampling weight (token, sequence, geometric):
// shared by verl-style options (correction_options.hpp) and the slime / TRL
// modes (flavour_options.hpp).
#include <string>

#include "../core/error.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// Level of the IS weight w (delta = l_T - l_E, clamped to +-20 before exp).
enum class is_level {
    token,      ///< w_t = exp(clamp(delta_t))
    sequence,   ///< w = exp(clamp(sum_s delta)), the same for every token of s
    geometric   ///< w = exp(clamp(sum_s delta / L_s)) (GSPO-style geometric mean)
};

inline const char* is_level_name(is_level l) noexcept {
    switch (l) {
        case is_level::token: return "token";
        case is_level::sequence: return "sequence";
        case is_level::geometric: return "geometric";
    }
    return "?";
}

inline is_level parse_is_level(const std::string& s) {
    if (s == "token") return is_level::token;
    if (s == "sequence") return is_level::sequence;
    if (s == "geometric") return is_level::geometric;
    throw argument_error(detail::concat("unknown IS level '", s, "' (expected token, sequence or geometric)"));
}

LOGRATIO_NAMESPACE_END
