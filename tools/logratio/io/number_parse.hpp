#pragma once
// Decimal text to double for the readers (CSV cells, JSON numbers): exactly
// rounded (round-to-nearest-even, as strtod and Python's float()), locale-
// independent, no leading '+' or whitespace accepted: std::from_chars, with
// its out-of-range case given a value. libstdc++ 12 (Debian 12's g++)
// implements from_chars(double) with the fast_float algorithm already
// (libstdc++-v3/src/c++17/floating_from_chars.cc includes fast_float since
// GCC 12): measured on the benchmark's CSV cells (17-digit values,
// bench/RESULTS.md "Readers") fast_float 3.9 called directly took 58 ns per
// cell, std::from_chars 52 ns, so Debian's libfast-float-dev would add a
// dependency and no speed.
#include <charconv>
#include <cmath>
#include <string_view>
#include <system_error>

namespace logratio_cli {

/// Parses the longest number at [first, last) into `x`; returns the end
/// of the number, `first` if there is none (then `x` is unchanged).
/// Accepted: [-]digits[.digits][(e|E)[+-]digits], [-].digits, inf,
/// infinity, nan, nan(chars) (any case). A magnitude beyond the double range
/// is +-inf, one that rounds below the smallest subnormal +-0 (as strtod).
inline const char* parse_double(const char* first, const char* last, double& x) noexcept {
    const auto r = std::from_chars(first, last, x);
    if (r.ec == std::errc::result_out_of_range) {
        const std::string_view t(first, static_cast<std::size_t>(r.ptr - first));
        const bool neg = t[0] == '-';
        const auto e = t.find_first_of("eE");
        const bool tiny = e != std::string_view::npos && t.find('-', e) != std::string_view::npos;
        x = tiny ? (neg ? -0.0 : 0.0) : (neg ? -HUGE_VAL : HUGE_VAL);
    }
    return r.ptr;
}

}  // namespace logratio_cli
