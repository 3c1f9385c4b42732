#pragma once
// The histogram and tail quantiles of one dump's delta (io/dump_histogram.hpp
// computes it; the report draws it).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace logratio_cli {

struct dump_histogram {
    std::string path;
    double lo = 0, hi = 0;              ///< bin range
    std::vector<std::uint64_t> counts;  ///< equal-width bins over [lo, hi]
    std::uint64_t below = 0, above = 0, tokens = 0;
    std::vector<std::pair<std::string, double>> quantiles;  ///< label, value
};

}  // namespace logratio_cli
