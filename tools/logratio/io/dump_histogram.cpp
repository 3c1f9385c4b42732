#include "dump_histogram.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <logratio/quantiles/quantiles.hpp>

#include "mapped_file.hpp"
#include "panel_input.hpp"
#include "safetensors.hpp"
#include "tensor_names.hpp"

namespace logratio_cli {

namespace {

/// A probability as a quantile's label ("0.999"): %g, as the reports print them.
std::string prob_label(double p) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", p);
    return b;
}

}  // namespace

dump_histogram histogram_of_dump(const std::string& path) {
    mapped_file f(path);
    const auto st = parse_safetensors(f);
    const panel_tensors in = dump_tensors(st, path, "");
    std::vector<double> d;
    with_panel_view(in, [&](const auto& v) {
        for (std::uint64_t i = 0; i < v.size(); ++i)
            if (v.counts(i)) {
                const double x = logratio::to_double(v.train()[i]) - logratio::to_double(v.rollout()[i]);
                if (std::isfinite(x)) d.push_back(x);
            }
    });
    dump_histogram h;
    h.path = path;
    h.tokens = d.size();
    if (d.empty()) return h;
    const std::vector<double> probs{0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999};
    const auto q = logratio::quantiles(d.begin(), d.end(), probs);
    for (std::size_t i = 0; i < probs.size(); ++i) h.quantiles.push_back({"delta_q" + prob_label(probs[i]), q[i]});
    std::vector<double> ad(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) ad[i] = std::fabs(d[i]);
    const std::vector<double> aprobs{0.5, 0.9, 0.99, 0.999, 0.9999};
    const auto aq = logratio::quantiles(ad.begin(), ad.end(), aprobs);
    for (std::size_t i = 0; i < aprobs.size(); ++i) h.quantiles.push_back({"abs_delta_q" + prob_label(aprobs[i]), aq[i]});
    double m = std::max(std::fabs(q.front()), std::fabs(q.back())) * 1.5;
    if (!(m > 0)) m = std::max(1e-6, *std::max_element(ad.begin(), ad.end()));
    h.lo = -m;
    h.hi = m;
    h.counts.assign(61, 0);
    for (double x : d) {
        if (x < h.lo) ++h.below;
        else if (x > h.hi) ++h.above;
        else h.counts[std::min<std::size_t>(60, static_cast<std::size_t>((x - h.lo) / (h.hi - h.lo) * 61.0))]++;
    }
    return h;
}

}  // namespace logratio_cli
