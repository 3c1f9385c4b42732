#pragma once
// Check `temperature`: a temperature applied on one side only. With
// temperature tau on the rollout side, l_E = z/tau - lse(z/tau) against
// l_T = z - lse(z): l_E grows about 1/tau times as fast as l_T across tokens.
//
// Estimate: the slope b of l_E on l_T within response-position buckets
// (each bucket's own intercept absorbs per-position constants; pooled
// within-bucket least squares over usable tokens, filled values excluded).
// The temperature ratio tau_E / tau_T is about 1 / b.
//
// Rule: warn when |b - 1| >= 0.08, fail when |b - 1| >= 0.2.
// Measured with tests/doctor/make_doctor_dumps --print (planted.hpp, 160 x 128 slots, ~9,900 tokens each):
//   clean bf16 vs f32     b = 1.000
//   temperature 0.7       b = 1.262 (ratio estimate 0.79 for a true 0.7)
//   other planted bugs    b in [0.995, 1.000] (shifts: 0.006, reported under alignment)
#include "../findings.hpp"
#include "../scan.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

constexpr double temperature_warn = 0.08, temperature_fail = 0.2;

/// The pooled within-position-bucket slope of l_E on l_T (NaN: no spread).
inline double within_bucket_slope(const scan_state& st) {
    double sxy = 0, sxx = 0;
    for (const auto& b : st.slope) {
        if (b.n < 2) continue;
        const double n = static_cast<double>(b.n);
        sxy += b.sxy - b.sx * b.sy / n;
        sxx += b.sxx - b.sx * b.sx / n;
    }
    return sxx > 0 ? sxy / sxx : NAN;
}

inline finding check_temperature(const scan_state& st) {
    finding f;
    f.check = "temperature";
    const double b = within_bucket_slope(st);
    f.num("slope_rollout_on_train", b).num("temperature_ratio_rollout_to_train", 1.0 / b);
    f.what_to_check = "the sampling temperature: is it applied to the logits on both sides (or neither)?";
    const double dev = std::fabs(b - 1.0);
    if (std::isnan(b)) {
        f.not_assessed("too few tokens to estimate a slope");
    } else if (dev >= temperature_warn) {
        f.level = dev >= temperature_fail ? severity::fail : severity::warn;
        f.summary = "l_E grows " + g3(b) + "x as fast as l_T: a temperature on one side, rollout/trainer ratio about " +
                    g3(1.0 / b);
    } else {
        f.summary = "slope of l_E on l_T is " + g3(b) + ": same temperature on both sides";
    }
    return f;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
