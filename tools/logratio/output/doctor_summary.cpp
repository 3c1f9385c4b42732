#include "doctor_summary.hpp"

#include <algorithm>

namespace logratio_cli {

std::vector<check_summary> summarize_checks(const std::vector<dump_diagnosis>& ds) {
    std::vector<check_summary> out;
    for (const auto& x : ds)
        for (const auto& f : x.d.findings) {
            auto it = std::find_if(out.begin(), out.end(), [&](const check_summary& c) { return c.check == f.check; });
            if (it == out.end()) {
                out.push_back({f.check, 0, 0, {}, {}});
                it = out.end() - 1;
            }
            if (!logratio::doctor::raises(f.level)) continue;
            (f.level == logratio::doctor::severity::fail ? it->fail : it->warn)++;
            if (!x.run.empty()) it->runs.insert(x.run);
            it->dumps.push_back(x.label);
        }
    return out;
}

std::string label_list(const std::vector<std::string>& xs, std::size_t limit) {
    std::string s;
    for (std::size_t i = 0; i < xs.size() && i < limit; ++i) s += (i ? ", " : "") + xs[i];
    if (xs.size() > limit) s += ", ... (" + std::to_string(xs.size() - limit) + " more)";
    return s;
}

}  // namespace logratio_cli
