// Writes the seed inputs of the `state` fuzz target (serialized sketches and
// accumulators) into DIR; the other targets' seeds are copies of real files.
//   make_fuzz_seeds fuzz/corpus/state
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <logratio/correction/correction.hpp>
#include <logratio/panel/panel.hpp>
#include <logratio/quantiles/kll_sketch.hpp>

namespace {
void put(const std::string& path, const std::vector<std::uint8_t>& b) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const std::string dir = argv[1];
    logratio::kll_sketch<float> f(8);
    logratio::kll_sketch<double> d(16);
    for (int i = 0; i < 300; ++i) {
        f.update(std::sin(i * 0.37f));
        d.update(std::cos(i * 0.11));
    }
    put(dir + "/kll_float.bin", f.serialize());
    put(dir + "/kll_double.bin", d.serialize());
    put(dir + "/kll_empty.bin", logratio::kll_sketch<float>(8).serialize());
    std::vector<float> tr{-0.5f, -1.0f, -0.25f, -2.0f, -0.1f, -3.0f}, ro{-0.51f, -0.98f, -0.25f, -2.1f, -0.2f, -2.0f};
    std::vector<std::uint8_t> m{1, 1, 1, 0, 1, 1};
    const auto v = logratio::padded(tr, ro, m, 2, 3);
    put(dir + "/panel.bin", logratio::accumulate_panel(v).serialize());
    logratio::correction_options o;
    o.is = logratio::is_options(logratio::is_level::sequence, 2.0);
    o.rejection = logratio::parse_rejection("token_k1,seq_max_k2", "0.5_2,0.1");
    o.veto = 0.1;
    std::vector<float> w(tr.size());
    std::vector<std::uint8_t> k(tr.size());
    put(dir + "/correction.bin", logratio::correct_range(v, 0, 2, o, w.data(), k.data()).serialize());
    std::printf("seeds written to %s\n", dir.c_str());
    return 0;
}
