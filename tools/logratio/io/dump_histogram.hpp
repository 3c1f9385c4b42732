#pragma once
// The histogram and tail quantiles of one dump's delta = l_T - l_E over its
// masked-in tokens (finite ones only), for `logratio report`.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../model/dump_histogram.hpp"

namespace logratio_cli {

/// 61 bins over +-1.5 times the larger of |q0.001| and |q0.999|; the tail
/// quantiles of delta and |delta|.
dump_histogram histogram_of_dump(const std::string& path);

}  // namespace logratio_cli
