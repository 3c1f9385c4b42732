// KLL sketch, the query side: the cached sorted view answers like a fresh
// one after every kind of change (update, batched update, merge, copy,
// deserialize), concurrent const queries agree, and compactions allocate
// nothing once the buffers have grown (global operator new counted here;
// this file is its own test binary so the counter sees nothing else).
#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include <logratio/quantiles/kll_sketch.hpp>

// The replacement below pairs malloc with free on purpose; GCC's inliner
// sees std::allocator's new/delete resolve to them and warns.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<long> g_allocations{0};
std::atomic<bool> g_counting{false};
}  // namespace

void* operator new(std::size_t n) {
    if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using sketch = logratio::kll_sketch<float>;

// The rank of x computed from the definition over a sketch rebuilt from
// bytes (the reference: a sketch whose view was never cached).
double fresh_rank(const sketch& s, float x, bool inclusive) {
    return sketch::deserialize(s.serialize()).rank(x, inclusive);
}

TEST_CASE("kll cache: exact small streams, ties, inclusive and exclusive ranks, NaN") {
    sketch s;
    for (float v : {1.0f, 2.0f, 2.0f, 3.0f}) s.update(v);
    CHECK(s.rank(2.0f, true) == 0.75);
    CHECK(s.rank(2.0f, false) == 0.25);
    CHECK(s.rank(0.5f) == 0.0);
    CHECK(s.rank(3.0f) == 1.0);
    CHECK(s.rank(std::numeric_limits<float>::quiet_NaN()) == 0.0);
    CHECK(s.quantile(0.5) == 2.0f);
    CHECK(s.quantile(0.76) == 3.0f);
}

TEST_CASE("kll cache: every change invalidates the view") {
    sketch s(64);
    for (int i = 1; i <= 100; ++i) s.update(static_cast<float>(i));
    CHECK(s.quantile(0.5) == 50.0f);  // builds the view
    // single updates that dominate the stream move the median
    for (int i = 0; i < 1000; ++i) s.update(1e6f);
    CHECK(s.quantile(0.5) == 1e6f);
    CHECK(s.rank(100.0f) == fresh_rank(s, 100.0f, true));
    // a batched update
    std::vector<float> low(1 << 17, -5.0f);
    s.update(low.data(), low.size());
    CHECK(s.quantile(0.5) == -5.0f);
    // a merge
    sketch big(64);
    std::vector<float> high(1 << 18, 7.0f);
    big.update(high.data(), high.size());
    (void)big.quantile(0.5);
    s.merge(big);
    CHECK(s.quantile(0.9) == 7.0f);
    CHECK(s.rank(0.0f) == fresh_rank(s, 0.0f, true));
    // a copy keeps answering for itself
    sketch c = s;
    c.merge(big);
    c.merge(big);
    CHECK(c.rank(0.0f) < s.rank(0.0f));
    CHECK(s.rank(0.0f) == fresh_rank(s, 0.0f, true));
}

TEST_CASE("kll cache: cached answers equal a fresh sketch's on random data") {
    std::mt19937_64 rng(7);
    std::lognormal_distribution<float> dist(0.0f, 2.0f);
    sketch s(200);
    std::vector<float> xs;
    for (int round = 0; round < 5; ++round) {
        for (int i = 0; i < 30000; ++i) s.update(dist(rng));
        xs.assign(50000, 0.0f);
        for (auto& x : xs) x = dist(rng);
        s.update(xs.data(), xs.size());
        const sketch fresh = sketch::deserialize(s.serialize());
        for (double p : {0.001, 0.1, 0.5, 0.9, 0.999}) {
            CAPTURE(p);
            CHECK(s.quantile(p) == fresh.quantile(p));
            const float q = s.quantile(p);
            CHECK(s.rank(q, true) == fresh.rank(q, true));
            CHECK(s.rank(q, false) == fresh.rank(q, false));
        }
    }
}

TEST_CASE("kll cache: concurrent const queries agree") {
    sketch s(200);
    std::vector<float> xs(1 << 18);
    std::mt19937 rng(3);
    std::normal_distribution<float> d;
    for (auto& x : xs) x = d(rng);
    s.update(xs.data(), xs.size());
    const sketch fresh = sketch::deserialize(s.serialize());
    std::vector<float> got(4);
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t) ts.emplace_back([&, t] { got[static_cast<std::size_t>(t)] = s.quantile(0.99); });
    for (auto& t : ts) t.join();
    for (float g : got) CHECK(g == fresh.quantile(0.99));
}

TEST_CASE("kll cache: single updates compact without allocating once buffers have grown") {
    sketch s(200);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    // warm up: the sketch reaches its levels and its buffers their sizes
    for (int i = 0; i < 2000000; ++i) s.update(d(rng));
    const std::size_t levels = s.num_levels();
    g_allocations = 0;
    g_counting = true;
    for (int i = 0; i < 20000; ++i) s.update(d(rng));  // hundreds of compactions
    g_counting = false;
    REQUIRE(s.num_levels() == levels);  // no new level: nothing had to grow
    CHECK(g_allocations.load() == 0);
}

}  // namespace
