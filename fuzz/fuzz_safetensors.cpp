// libFuzzer target: the safetensors reader, then the panel (and its exact
// quantiles) of whatever parses. Only logratio::error may escape the reader
// and the kernels; anything else (a crash, a sanitizer report, another
// exception) is a bug.
#include <cstddef>
#include <cstdint>

#include <logratio/panel/panel.hpp>
#include <logratio/panel/panel_quantiles.hpp>
#include <logratio/quantiles/quantiles.hpp>

#include "io/panel_input.hpp"
#include "io/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const auto st = logratio_cli::parse_safetensors(data, size, "fuzz.safetensors");
        logratio_cli::panel_tensors in;
        in.train = st.find("train_logprobs");
        in.rollout = st.find("rollout_logprobs");
        in.mask = st.find("mask");
        in.offsets = st.find("cu_seqlens");
        if (in.train && in.train->numel() > (1u << 20)) return 0;  // keep each run fast
        logratio_cli::with_panel_view(in, [](const auto& v) {
            logratio::panel_options o;
            o.nonfinite = logratio::nonfinite_policy::omit;
            auto p = logratio::compute_panel(v, o);
            logratio::add_panel_quantiles(p, v, o.nonfinite);
        });
    } catch (const logratio::error&) {
    }
    return 0;
}
