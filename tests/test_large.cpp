// 64-bit token counts and locations in bounded memory. N = 2^31 + 3*2^16
// tokens (more than int32 can count or index) are generated chunk by chunk
// and fed through the unit of streaming work (what panel_stream does, without
// its quantile sketches): each 2^22-token chunk is a packed view of two
// sequences, refilled in place; its accumulator's location is offset by the
// sequences before it, and the chunk accumulators are merged in order -- on
// two threads, each owning half of the chunks, merged at the end. Three
// tokens differ from the rest (log-prob 0, delta 0): one near the start, two
// past token 2^31; the maximum |delta| lies past 2^31 and must be located by
// its 64-bit sequence and position.
//
// Bounded: two threads x two 16 MiB chunk buffers. Measured with
// /usr/bin/time -v on the 2-core CI machine (AVX2 build): peak RSS 69 MB,
// 5.2 s of CPU, 20 s wall with other builds running (load 7.5) -- under
// 1 GB and 30 s; the sparse mapping this test replaced peaked at 16.8 GB. Built for x86-64-v3 (about 4x faster than SSE2 here):
// on a CPU without AVX2, or when the buffers cannot be allocated, the
// test exits 77 (ctest: skipped), never a pass.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include <logratio/panel/panel.hpp>

#include "test_util.hpp"

namespace {
constexpr std::uint64_t chunk = std::uint64_t(1) << 22;            // tokens per chunk
constexpr std::uint64_t N = (std::uint64_t(1) << 31) + 3 * (std::uint64_t(1) << 16);
constexpr std::uint64_t chunks = (N + chunk - 1) / chunk;          // 513; the last is short

struct special {
    std::uint64_t index;  // global token index
    float train, rollout;
};
// delta = train - rollout: +0.125 at 12345, -0.25 past 2^31, +0.5 (the max |delta|) at N - 5
const special specials[] = {{12345, -2.0f, -2.125f},
                            {(std::uint64_t(1) << 31) + 7, -0.5f, -0.25f},
                            {N - 5, -1.0f, -1.5f}};

/// Sequences of chunk c: two per full chunk, one in the short last chunk.
std::uint64_t sequences_in(std::uint64_t c) { return c + 1 < chunks ? 2 : 1; }

/// Accumulates chunks [first, last) in order; locations count every sequence
/// of the chunks before (64-bit), as panel_stream::add does.
logratio::panel_accumulator run_chunks(std::uint64_t first, std::uint64_t last) {
    std::vector<float> train(chunk, 0.0f), rollout(chunk, 0.0f);
    std::uint64_t seq_before = 0;
    for (std::uint64_t c = 0; c < first; ++c) seq_before += sequences_in(c);
    logratio::panel_accumulator acc;
    bool any = false;
    for (std::uint64_t c = first; c < last; ++c) {
        const std::uint64_t begin = c * chunk, n = std::min(chunk, N - begin);
        for (const special& s : specials)
            if (s.index >= begin && s.index < begin + n) train[s.index - begin] = s.train, rollout[s.index - begin] = s.rollout;
        std::vector<std::int64_t> cu{0, std::int64_t(n)};
        if (sequences_in(c) == 2) cu = {0, std::int64_t(chunk / 2), std::int64_t(chunk)};
        const auto v = logratio::paired_view<float>::packed(train.data(), rollout.data(), n, cu.data(), cu.size());
        logratio::panel_accumulator a = logratio::accumulate_panel_range(v, 0, v.num_sequences());
        a.abs_max_at.sequence += seq_before;
        if (any) acc.merge(a);
        else acc = a;
        any = true;
        seq_before += v.num_sequences();
        for (const special& s : specials)  // back to zeros for the next chunk
            if (s.index >= begin && s.index < begin + n) train[s.index - begin] = rollout[s.index - begin] = 0.0f;
    }
    return acc;
}
}  // namespace

TEST_CASE("large: more than 2^31 tokens, 64-bit counts and locations, chunk by chunk in bounded memory") {
    static_assert(N > std::uint64_t(std::numeric_limits<std::int32_t>::max()), "more tokens than int32 counts");
    logratio::panel_accumulator lo, hi;
    try {
        std::thread t([&] { hi = run_chunks(chunks / 2, chunks); });
        lo = run_chunks(0, chunks / 2);
        t.join();
    } catch (const std::bad_alloc&) {
        std::printf("skipped: cannot allocate the chunk buffers\n");
        std::exit(77);
    }
    lo.merge(hi);
    const logratio::panel p = lo.finish();
    CHECK(p.tokens == N);
    CHECK(p.sequences == 2 * (chunks - 1) + 1);
    // the maximum |delta| (global token N - 5, past 2^31): the short last chunk's
    // only sequence, which starts at token (chunks - 1) * chunk
    CHECK(p.delta_abs_max == 0.5);
    CHECK(p.delta_abs_max_at.sequence == 2 * (chunks - 1));
    CHECK(p.delta_abs_max_at.position == N - 5 - (chunks - 1) * chunk);
    CHECK(p.delta_min == -0.25);
    CHECK(p.delta_max == 0.5);
    CHECK(test::spec_close(p.delta_mean, (0.5 - 0.25 + 0.125) / double(N)));
    CHECK(test::spec_close(p.delta_abs_mean, (0.5 + 0.25 + 0.125) / double(N)));
    CHECK(test::spec_close(p.frac_abs_delta_gt[2], 3.0 / double(N)));  // |delta| > 0.1
    CHECK(test::spec_close(p.train_logprob_mean, (-2.0 - 0.5 - 1.0) / double(N)));
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
