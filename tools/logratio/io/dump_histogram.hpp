#pragma once
// The histogram and tail quantiles of one dump's delta = l_T - l_E over its
// masked-in tokens (finite ones only), for `logratio report`.
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

/// 61 bins over +-1.5 times the larger of |q0.001| and |q0.999|; the tail
/// quantiles of delta and |delta|.
dump_histogram histogram_of_dump(const std::string& path);

}  // namespace logratio_cli
