#pragma once
// The doctor's findings over several dumps: each dump's diagnosis and
// identity, and per check where it warns or fails -- what `logratio doctor
// --each` prints (as text or JSON) and `logratio report`'s Doctor section shows.
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include <logratio/doctor/diagnose.hpp>

#include "../model/dump_diagnosis.hpp"

namespace logratio_cli {

/// Per check: dumps where it warns / fails, and the runs and dumps it touches.
struct check_summary {
    std::string check;
    std::size_t warn = 0, fail = 0;
    std::set<std::string> runs;
    std::vector<std::string> dumps;  ///< labels, in dump order
};

std::vector<check_summary> summarize_checks(const std::vector<dump_diagnosis>& ds);

/// "name@3, name@4, ... (N more)": at most `limit` labels.
std::string label_list(const std::vector<std::string>& xs, std::size_t limit = 8);

}  // namespace logratio_cli
