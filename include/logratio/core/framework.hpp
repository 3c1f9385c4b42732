#pragma once
// Whose names, aggregation and definitions a component's metrics follow:
// the panel's extra mismatch metrics (panel_options::flavour) and the
// correction's flavours (correction/flavour_options.hpp) share it.
#include <string>

#include "error.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// Whose names, aggregation and definitions the metrics follow.
enum class framework { verl, slime, trl };

inline const char* framework_name(framework f) noexcept {
    switch (f) {
        case framework::verl: return "verl";
        case framework::slime: return "slime";
        case framework::trl: return "trl";
    }
    return "?";
}

inline framework parse_framework(const std::string& s) {
    if (s == "verl") return framework::verl;
    if (s == "slime") return framework::slime;
    if (s == "trl") return framework::trl;
    throw argument_error(detail::concat("unknown flavour '", s, "' (expected verl, slime or trl)"));
}

LOGRATIO_NAMESPACE_END
