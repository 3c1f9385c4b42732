#pragma once
// A double as text that reads back as the same double: attributes
// (io/trackers), the export's CSVs (commands/runs_export) and the options
// reconcile reports all write numbers with this one function.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace logratio_cli {

/// A double as %.17g writes it (fixed notation for exponents -4..16, else
/// scientific), with the fewest digits that read back as the same double
/// (std::to_chars' shortest round trip): 0.0003, 1000, 64, 1e-06, 1e+20;
/// "nan", "inf", "-inf" for the non-finite.
inline std::string number_text(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[400];  // fixed notation of a double below 1e17, or any scientific one
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    const std::string sci(buf, r.ptr);
    const int exponent = std::atoi(sci.c_str() + sci.find('e') + 1);
    if (exponent < -4 || exponent >= 17) return sci;
    r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
    return std::string(buf, r.ptr);
}

}  // namespace logratio_cli
