// libFuzzer target: deserialization of every mergeable state (KLL sketches
// of float and double, the panel accumulator, the correction accumulator).
// Whatever deserializes must answer queries, merge with itself and
// round-trip to the same bytes.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <logratio/correction/correction_accumulator.hpp>
#include <logratio/panel/panel_accumulator.hpp>
#include <logratio/quantiles/kll_sketch.hpp>

namespace {
template <class S>
void roundtrip(const std::uint8_t* data, std::size_t size) {
    try {
        S s = S::deserialize(data, size);
        const auto bytes = s.serialize();
        if (S::deserialize(bytes.data(), bytes.size()).serialize() != bytes) throw std::logic_error("round trip");
        if constexpr (std::is_same<S, logratio::panel_accumulator>::value ||
                      std::is_same<S, logratio::correction_accumulator>::value) {
            (void)s.finish();
        } else {
            if (s.n()) (void)s.quantile(0.5);
            (void)s.normalized_rank_error();
        }
        S t = s;
        t.merge(s);
    } catch (const logratio::error&) {
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    roundtrip<logratio::kll_sketch<float>>(data, size);
    roundtrip<logratio::kll_sketch<double>>(data, size);
    roundtrip<logratio::panel_accumulator>(data, size);
    roundtrip<logratio::correction_accumulator>(data, size);
    return 0;
}
