// 64-bit indices and counts: a packed view of N = 2^31 + 3·2^16 tokens (more
// than int32 can index) over memory that is mostly the kernel's shared zero
// page (anonymous MAP_NORESERVE mappings: untouched pages cost no RAM), with a
// few non-zero tokens past index 2^31. The one-pass panel must count every
// token, locate the maximum by 64-bit sequence and position, and equal the
// chunked computation (one accumulator per sequence range, merged).
#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <doctest/doctest.h>

#include <logratio/logratio.hpp>

#include "test_util.hpp"

namespace {
template <class T>
struct big_array {
    T* p = nullptr;
    std::size_t bytes = 0;
    explicit big_array(std::uint64_t n) : bytes(n * sizeof(T)) {
        void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        p = m == MAP_FAILED ? nullptr : static_cast<T*>(m);
    }
    ~big_array() {
        if (p) ::munmap(p, bytes);
    }
};
}  // namespace

TEST_CASE("large: more than 2^31 tokens, 64-bit counts and locations, chunked = one pass") {
    const std::uint64_t N = (std::uint64_t(1) << 31) + 3 * (std::uint64_t(1) << 16);
    big_array<float> train(N), rollout(N);
    if (!train.p || !rollout.p) {
        MESSAGE("cannot map 2 x 8.6 GB of address space here: skipped");
        return;
    }
    // log-prob 0 everywhere (the zero page): delta = 0; three tokens differ
    const std::uint64_t a = (std::uint64_t(1) << 31) + 7, b = N - 5, c = 12345;
    train.p[a] = -0.5f;
    rollout.p[a] = -0.25f;  // delta -0.25
    train.p[b] = -1.0f;
    rollout.p[b] = -1.5f;  // delta +0.5: the maximum |delta|
    train.p[c] = -2.0f;
    rollout.p[c] = -2.125f;  // delta +0.125
    const std::vector<std::int64_t> cu{0, std::int64_t(1) << 30, std::int64_t(1) << 31, std::int64_t(N)};
    const auto v = logratio::paired_view<float>::packed(train.p, rollout.p, N, cu.data(), cu.size());
    const logratio::panel p = logratio::compute_panel(v, {}, 2);
    CHECK(p.tokens == N);
    CHECK(p.sequences == 3);
    CHECK(p.delta_abs_max == 0.5);
    CHECK(p.delta_abs_max_at.sequence == 2);
    CHECK(p.delta_abs_max_at.position == b - (std::uint64_t(1) << 31));
    CHECK(p.delta_min == -0.25);
    CHECK(test::spec_close(p.delta_mean, (0.5 - 0.25 + 0.125) / double(N)));
    CHECK(test::spec_close(p.delta_abs_mean, (0.5 + 0.25 + 0.125) / double(N)));
    CHECK(test::spec_close(p.frac_abs_delta_gt[2], 3.0 / double(N)));  // |delta| > 0.1
    // chunked: each sequence on its own, merged in order
    logratio::panel_accumulator acc = logratio::accumulate_panel_range(v, 0, 1);
    acc.merge(logratio::accumulate_panel_range(v, 1, 2));
    acc.merge(logratio::accumulate_panel_range(v, 2, 3));
    const logratio::panel q = acc.finish();
    const auto e = logratio::panel_entries(p), f = logratio::panel_entries(q);
    for (std::size_t i = 0; i < e.size(); ++i)
        if (e[i].second) CHECK_MESSAGE(test::spec_close(*f[i].second, *e[i].second), e[i].first);
    CHECK(q.delta_abs_max_at.position == p.delta_abs_max_at.position);
}

TEST_CASE("bad values: subnormal log-probs are ordinary numbers, -inf is non-finite") {
    // no flush-to-zero anywhere: a subnormal difference survives exactly
    std::vector<double> tr{-1e-310, -2e-310, -0.5}, ro{-3e-310, -1e-310, -0.5};
    std::vector<std::uint8_t> m{1, 1, 1};
    const auto p = logratio::compute_panel(logratio::padded(tr, ro, m, 1, 3));
    CHECK(p.delta_max == 2e-310);
    CHECK(p.delta_min == -1e-310);
    CHECK(p.delta_abs_max == 2e-310);
    // -inf (probability 0) is non-finite: an error by default, left out and counted with omit
    std::vector<double> ti{-0.1, -std::numeric_limits<double>::infinity(), -0.2}, ri{-0.1, -0.3, -0.2};
    CHECK_THROWS_AS(logratio::compute_panel(logratio::padded(ti, ri, m, 1, 3)), logratio::value_error);
    logratio::panel_options o;
    o.nonfinite = logratio::nonfinite_policy::omit;
    const auto q = logratio::compute_panel(logratio::padded(ti, ri, m, 1, 3), o);
    CHECK(q.tokens == 2);
    CHECK(q.nonfinite_tokens == 1);
}
