// The O(n log n) run statistics against their O(n²) definitions and scipy:
// the slope selection (stats/slope_selection.hpp) must pick bitwise the
// slopes of the O(n²) list, Knight's Kendall count the O(n²) pair count, on
// random data with many ties in x and in y; at n = 10^4 and 10^5 every
// value equals scipy's (tests/gen_scale_reference.py, data from an LCG
// both sides implement).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <logratio/stats/rank_tests.hpp>
#include <logratio/stats/regression.hpp>
#include <logratio/stats/trend_fits.hpp>

namespace {

using namespace logratio::stats;

bool same_bits(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)) || (a == 0 && b == 0);
}

/// Tied data: x on a grid of `xs` values, y one of four kinds (a grid, a
/// dyadic grid with an offset, a trend plus noise on a grid, a linear trend
/// with a few jumps), so that slopes tie exactly and nearly.
void tied_data(std::mt19937_64& g, std::size_t n, std::vector<double>& x, std::vector<double>& y) {
    const unsigned xs = 1 + static_cast<unsigned>(g() % 60), ys = 1 + static_cast<unsigned>(g() % 40);
    const int kind = static_cast<int>(g() % 4);
    x.resize(n);
    y.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = static_cast<double>(g() % xs);
        const double u = static_cast<double>(g() % ys);
        switch (kind) {
            case 0: y[i] = u * 0.01; break;
            case 1: y[i] = std::ldexp(static_cast<double>(g() % 4096), -12) - 0.3; break;
            case 2: y[i] = 0.013 * x[i] + 0.01 * u; break;
            default: y[i] = 0.37 * x[i] + (g() % 9 == 0 ? 0.01 * u : 0.0); break;
        }
    }
}

std::vector<double> sorted_slopes(const std::vector<double>& x, const std::vector<double>& y) {
    std::vector<double> s;
    for (std::size_t i = 0; i < x.size(); ++i)
        for (std::size_t j = 0; j < x.size(); ++j)
            if (x[i] - x[j] > 0) s.push_back((y[i] - y[j]) / (x[i] - x[j]));
    std::sort(s.begin(), s.end());
    return s;
}

}  // namespace

TEST_CASE("slope selection: every rank is bitwise the O(n²) list's, on data with ties in x and y") {
    std::mt19937_64 g(20261206);
    int compared = 0;
    for (int it = 0; it < 600; ++it) {
        std::vector<double> x, y;
        tied_data(g, 2 + static_cast<std::size_t>(g() % 140), x, y);
        const auto s = sorted_slopes(x, y);
        const auto d = detail::slope_data_of(x.data(), y.data(), x.size());
        REQUIRE(d.pairs == s.size());
        if (s.empty()) continue;
        std::vector<std::uint64_t> ranks = {0, s.size() - 1, s.size() / 2};
        for (int q = 0; q < 5; ++q) ranks.push_back(g() % s.size());
        // small bands and samples: every step of the search runs on small inputs
        detail::slope_selection_tuning tune;
        if (it % 2) {
            tune.limit = 4 + g() % 40;
            tune.sample = 8 + static_cast<std::size_t>(g() % 64);
        }
        const auto v = detail::slopes_at_ranks(d, ranks, nullptr, tune);
        for (std::size_t q = 0; q < ranks.size(); ++q) {
            INFO("case " << it << ", n " << x.size() << ", rank " << ranks[q] << " of " << s.size());
            CHECK(same_bits(v[q], s[static_cast<std::size_t>(ranks[q])]));
            ++compared;
        }
    }
    CHECK(compared > 3000);
}

TEST_CASE("theil_sen and kendall_tau equal their O(n²) references on tied data") {
    std::mt19937_64 g(41);
    for (int it = 0; it < 300; ++it) {
        std::vector<double> x, y;
        tied_data(g, 2 + static_cast<std::size_t>(g() % 400), x, y);
        const std::size_t n = x.size();
        INFO("case " << it << ", n " << n);
        const auto k = kendall_tau(x.data(), y.data(), n), kr = kendall_tau_reference(x.data(), y.data(), n);
        CHECK(same_bits(k.tau, kr.tau));
        CHECK(same_bits(k.pvalue, kr.pvalue));
        CHECK(k.exact == kr.exact);
        if (*std::min_element(x.begin(), x.end()) == *std::max_element(x.begin(), x.end())) {
            CHECK_THROWS_AS(theil_sen(x.data(), y.data(), n), logratio::shape_error);
            continue;
        }
        const auto t = theil_sen(x.data(), y.data(), n), tr = theil_sen_reference(x.data(), y.data(), n);
        CHECK(same_bits(t.slope, tr.slope));
        CHECK(same_bits(t.intercept, tr.intercept));
        CHECK(same_bits(t.low, tr.low));
        CHECK(same_bits(t.high, tr.high));
    }
}

TEST_CASE("slope selection: masses of equal slopes, the fallback range, tiny inputs") {
    auto both = [](std::vector<double> x, std::vector<double> y) {
        const auto t = theil_sen(x.data(), y.data(), x.size()), r = theil_sen_reference(x.data(), y.data(), x.size());
        CHECK(same_bits(t.slope, r.slope));
        CHECK(same_bits(t.low, r.low));
        CHECK(same_bits(t.high, r.high));
        return t;
    };
    const std::size_t n = 600;
    std::vector<double> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = static_cast<double>(i);
        y[i] = 0.1 * static_cast<double>(i);  // every slope within an ulp or two of 0.1
    }
    CHECK(both(x, y).slope == doctest::Approx(0.1).epsilon(1e-15));
    for (std::size_t i = 0; i < n; ++i) y[i] = 0.5 * static_cast<double>(i);  // every slope exactly 0.5
    CHECK(both(x, y).slope == 0.5);
    for (std::size_t i = 0; i < n; ++i) y[i] = 1.0;  // every slope 0
    CHECK(both(x, y).high == 0.0);
    for (std::size_t i = 0; i < n; ++i) y[i] = 1e-250 * static_cast<double>(i % 7);  // outside the exact range
    CHECK(!detail::slope_data_of(x.data(), y.data(), n).exact_range);
    both(x, y);
    both({1, 2}, {3, 5});
    both({1, 1, 2}, {3, 4, 5});
    const double one[] = {1, 1};
    CHECK_THROWS_AS(theil_sen(one, one, 2), logratio::shape_error);
}

namespace {

/// tests/gen_scale_reference.py's scale_data: x = i // 3, y = integers / 1000
/// from Knuth's MMIX LCG seeded with n.
void scale_data(std::size_t n, std::vector<double>& x, std::vector<double>& y) {
    x.resize(n);
    y.resize(n);
    std::uint64_t state = n;
    for (std::size_t i = 0; i < n; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = static_cast<double>(i / 3);
        y[i] = static_cast<double>((state >> 33) % 500 + i / 50) / 1000.0;
    }
}

void close_to_scipy(double got, double want, const char* what) {
    INFO(what << ": logratio " << got << ", scipy " << want);
    CHECK(std::fabs(got - want) <= 1e-9 * std::fabs(want) + 1e-15);
}

}  // namespace

TEST_CASE("run statistics equal scipy's at n = 10^4 and 10^5 with ties (O(n) pairs listed)") {
    std::ifstream f(std::string(LOGRATIO_TEST_DATA) + "/runs/scale_reference.json");
    REQUIRE(f);
    const auto ref = nlohmann::json::parse(f);
    REQUIRE(ref["cases"].size() == 2);
    for (const auto& c : ref["cases"]) {
        const std::size_t n = c["n"].get<std::size_t>();
        INFO("n = " << n);
        std::vector<double> x, y;
        scale_data(n, x, y);
        for (std::size_t i = 0; i < 5; ++i) REQUIRE(y[i] == c["y_head"][i].get<double>());  // the same LCG
        const auto d = detail::slope_data_of(x.data(), y.data(), n);
        const auto r = detail::theil_sen_ranks_of(d.pairs, n, d.x_tie_sum, d.y_tie_sum, 0.95);
        detail::slope_selection_trace trace;
        const auto v = detail::slopes_at_ranks(d, {r.median_lo, r.median_hi, r.lo, r.hi}, &trace);
        CHECK(trace.enumerated <= 64 * n);  // O(n) memory: no band larger than the limit was listed
        const auto& ts = c["theil_sen"];
        const auto t = theil_sen(x.data(), y.data(), n);
        CHECK(t.slope == (v[0] + v[1]) / 2);  // the median of the selected ranks
        // bitwise: the same IEEE quotients as numpy's
        CHECK(t.slope == ts["slope"].get<double>());
        CHECK(t.low == ts["low"].get<double>());
        CHECK(t.high == ts["high"].get<double>());
        close_to_scipy(t.intercept, ts["intercept"].get<double>(), "theil-sen intercept");
        const auto k = kendall_tau(x.data(), y.data(), n);
        close_to_scipy(k.tau, c["kendall"]["tau"].get<double>(), "kendall tau");
        close_to_scipy(k.pvalue, c["kendall"]["p"].get<double>(), "kendall p");
        const auto l = linregress(x.data(), y.data(), n);
        close_to_scipy(l.slope, c["linregress"]["slope"].get<double>(), "linregress slope");
        close_to_scipy(l.intercept, c["linregress"]["intercept"].get<double>(), "linregress intercept");
        close_to_scipy(l.rvalue, c["linregress"]["r"].get<double>(), "linregress r");
        close_to_scipy(l.pvalue, c["linregress"]["p"].get<double>(), "linregress p");
        close_to_scipy(l.slope_stderr, c["linregress"]["stderr"].get<double>(), "linregress stderr");
    }
}

TEST_CASE("slope selection: the median and Sen's interval through one shared band, bitwise the O(n²) list's") {
    // samples large against the band limit: the shared band is taken (its
    // own sample, one more round per cluster), on data with and without
    // repeated points (the merge's weighted and unit paths)
    std::mt19937_64 g(7041);
    std::size_t shared = 0, weighted = 0;
    for (int it = 0; it < 40; ++it) {
        std::vector<double> x, y;
        tied_data(g, 150 + static_cast<std::size_t>(g() % 250), x, y);
        if (it % 2)
            for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i) + 0.25 * x[i];  // distinct x
        const auto s = sorted_slopes(x, y);
        const auto d = detail::slope_data_of(x.data(), y.data(), x.size());
        if (s.size() < 100) continue;
        weighted += std::any_of(d.w.begin(), d.w.end(), [](std::uint64_t w) { return w > 1; });
        const auto r = detail::theil_sen_ranks_of(d.pairs, x.size(), d.x_tie_sum, d.y_tie_sum, 0.95);
        std::vector<std::uint64_t> ranks = {r.median_lo, r.median_hi};
        if (r.lo < s.size() && r.hi < s.size()) ranks.insert(ranks.end(), {r.lo, r.hi});
        detail::slope_selection_tuning tune;
        tune.limit = 40;
        tune.sample = 4000;
        detail::slope_selection_trace trace;
        const auto v = detail::slopes_at_ranks(d, ranks, &trace, tune);
        shared += trace.shared;
        for (std::size_t q = 0; q < ranks.size(); ++q) {
            INFO("case " << it << ", n " << x.size() << ", rank " << ranks[q] << " of " << s.size());
            CHECK(same_bits(v[q], s[static_cast<std::size_t>(ranks[q])]));
        }
    }
    CHECK(shared >= 10);
    CHECK(weighted >= 3);
}

TEST_CASE("radix_order: the order of a sort by (value, index), ties and signed zeros included") {
    std::mt19937_64 g(12);
    for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(100), std::size_t(511), std::size_t(512),
                                std::size_t(5000)}) {
        std::vector<double> v(n);
        for (auto& e : v) {
            const auto k = g() % 5;
            e = k == 0 ? 0.0 : k == 1 ? -0.0 : k == 2 ? static_cast<double>(g() % 7) - 3.0
                                                      : std::ldexp(static_cast<double>(g() % 100000) - 5e4, -int(g() % 60));
        }
        std::vector<std::uint32_t> got, want(n);
        detail::radix_order(v.data(), n, got);
        for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<std::uint32_t>(i);
        std::stable_sort(want.begin(), want.end(), [&](std::uint32_t a, std::uint32_t b) { return v[a] < v[b]; });
        INFO("n " << n);
        REQUIRE(got.size() == n);
        for (std::size_t i = 0; i + 1 < n; ++i) CHECK(v[got[i]] <= v[got[i + 1]]);  // sorted by value
        std::size_t same = 0;  // and, zeros apart (-0 first in the radix order), the same permutation
        for (std::size_t i = 0; i < n; ++i) same += got[i] == want[i] || (v[got[i]] == 0 && v[want[i]] == 0);
        CHECK(same == n);
    }
}

TEST_CASE("theil_sen_and_kendall: bitwise theil_sen and kendall_tau, one pair count") {
    std::mt19937_64 g(91);
    for (const std::size_t n : {std::size_t(40), std::size_t(91), std::size_t(700), std::size_t(3000)}) {
        std::vector<double> x, y;
        tied_data(g, n, x, y);
        for (std::size_t i = 0; i < n; ++i) x[i] += static_cast<double>(i % 3);  // x never all equal
        const auto both = theil_sen_and_kendall(x.data(), y.data(), n);
        const auto t = theil_sen(x.data(), y.data(), n);
        const auto k = kendall_tau(x.data(), y.data(), n);
        INFO("n " << n);
        CHECK(same_bits(both.theil_sen.slope, t.slope));
        CHECK(same_bits(both.theil_sen.low, t.low));
        CHECK(same_bits(both.theil_sen.high, t.high));
        CHECK(same_bits(both.theil_sen.intercept, t.intercept));
        CHECK(same_bits(both.kendall.tau, k.tau));
        CHECK(same_bits(both.kendall.pvalue, k.pvalue));
        CHECK(!std::isnan(both.kendall.pvalue));
    }
}

TEST_CASE("kendall_exact_p from the per-thread table: bitwise the recurrence run to c, every n <= 40 and c") {
    std::size_t compared = 0;
    for (std::uint64_t n = 3; n <= 40; ++n) {
        const std::uint64_t tot = n * (n - 1) / 2;
        for (std::uint64_t c = 0; c <= tot; ++c) {
            const std::uint64_t cc = std::min(c, tot - c);
            if (cc <= 1 || 4 * cc == n * (n - 1)) continue;  // closed forms
            double s = 0.0;
            for (double v : detail::kendall_inversion_table(n, cc, false)) s += v;
            const double want = std::clamp(2.0 * s / detail::factorial_of(n), 0.0, 1.0);
            INFO("n " << n << ", c " << c);
            CHECK(same_bits(kendall_exact_p(n, c), want));
            if (c % 7 == 0) kendall_exact_p(n + 1, 2 + c % 5);  // another n in between: its own table
            ++compared;
        }
    }
    CHECK(compared > 9000);
}

TEST_CASE("select_order_statistics: the values a sort puts at the ranks") {
    std::mt19937_64 g(5);
    for (int it = 0; it < 200; ++it) {
        std::vector<double> v(1 + g() % 300);
        for (auto& e : v) e = static_cast<double>(g() % 50);  // ties
        auto sorted = v;
        std::sort(sorted.begin(), sorted.end());
        std::vector<std::uint64_t> ranks;
        for (int q = 0; q < 1 + static_cast<int>(g() % 6); ++q) ranks.push_back(g() % (v.size() + 2));  // some past the end
        ranks.push_back(v.size() / 2);
        if (v.size() > 1) ranks.push_back(v.size() / 2 - 1);  // the median's two halves: a scan
        detail::select_order_statistics(v, ranks);
        for (const auto k : ranks)
            if (k < v.size()) CHECK(v[static_cast<std::size_t>(k)] == sorted[static_cast<std::size_t>(k)]);
    }
}

TEST_CASE("kth_smallest: the radix select's value is a sort's, negatives, ties and near-equal bits included") {
    std::mt19937_64 g(17);
    std::size_t compared = 0;
    for (int it = 0; it < 300; ++it) {
        std::vector<double> v(1 + g() % 700);
        const int kind = it % 3;
        for (auto& e : v) {
            const double u = static_cast<double>(g() >> 11) * 0x1p-53;
            if (kind == 0) e = (u - 0.5) * 1e3;                                     // both signs
            else if (kind == 1) e = static_cast<double>(1 + g() % 9) * (g() % 2 ? -0.125 : 3.0);  // ties
            else e = 2e-7 * (1 + u * 1e-12);                                         // a few ulps apart
        }
        auto sorted = v;
        std::sort(sorted.begin(), sorted.end());
        for (int q = 0; q < 4; ++q) {
            const std::size_t k = q == 0 ? 0 : q == 1 ? v.size() - 1 : static_cast<std::size_t>(g() % v.size());
            INFO("case " << it << ", n " << v.size() << ", k " << k);
            CHECK(same_bits(detail::kth_smallest(v, k), sorted[k]));
            ++compared;
        }
    }
    CHECK(compared == 1200);
}

TEST_CASE("Knight's count: the O(n²) count with x in order (the sort skipped), in order with y unsorted in an x tie, and shuffled") {
    std::mt19937_64 g(23);
    for (int it = 0; it < 120; ++it) {
        std::vector<double> x, y;
        tied_data(g, 2 + static_cast<std::size_t>(g() % 300), x, y);
        const int order = it % 3;
        if (order < 2) std::sort(x.begin(), x.end());  // 0: in order unless an x tie has y out of order
        if (order == 0) {
            std::vector<std::size_t> idx(x.size());
            for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
            std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
                return x[a] < x[b] || (x[a] == x[b] && y[a] < y[b]);
            });
            std::vector<double> yy(y.size());
            for (std::size_t i = 0; i < idx.size(); ++i) yy[i] = y[idx[i]];
            y = yy;  // (x, y) in order: xy_order is the identity without a sort
        }
        INFO("case " << it << ", order " << order << ", n " << x.size());
        const auto c = detail::kendall_counts_of(x.data(), y.data(), x.size());
        const auto r = detail::kendall_counts_reference(x.data(), y.data(), x.size());
        CHECK(c.dis == r.dis);
        CHECK(c.s == r.s);
        CHECK(c.xtie == r.xtie);
        CHECK(c.ytie == r.ytie);
        CHECK(c.y1 == r.y1);
        const auto idx = detail::xy_order(x.data(), y.data(), x.size());
        for (std::size_t i = 1; i < idx.size(); ++i) {
            const double xa = x[idx[i - 1]], xb = x[idx[i]];
            CHECK((xa < xb || (xa == xb && y[idx[i - 1]] <= y[idx[i]])));
        }
    }
}

namespace {

/// Permutations of 0..n): shuffled, or sorted with a few nearby swaps (a
/// narrow band's b-ranks), or reversed.
std::vector<std::uint32_t> test_permutation(std::mt19937_64& g, std::size_t n, int kind) {
    std::vector<std::uint32_t> a(n);
    for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<std::uint32_t>(i);
    if (kind == 0) std::shuffle(a.begin(), a.end(), g);
    if (kind == 1)
        for (std::size_t i = 0; i + 1 < n; i += 1 + g() % 4) std::swap(a[i], a[std::min(n - 1, i + g() % 12)]);
    if (kind == 2) std::reverse(a.begin(), a.end());
    return a;
}

/// The (earlier, later) position pairs with earlier key > later key, O(n²), sorted.
std::vector<std::pair<std::uint32_t, std::uint32_t>> inversion_pairs(const std::vector<std::uint32_t>& a) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
    for (std::uint32_t i = 0; i < a.size(); ++i)
        for (std::uint32_t j = i + 1; j < a.size(); ++j)
            if (a[i] > a[j]) out.emplace_back(i, j);
    return out;
}

std::vector<detail::merge_item> items_at_positions(const std::vector<std::uint32_t>& a) {
    std::vector<detail::merge_item> it(a.size());
    for (std::uint32_t i = 0; i < a.size(); ++i) it[i] = {a[i], i};
    return it;
}

}  // namespace

TEST_CASE("inversions of a permutation: the radix split and the insertion sort meet the O(n²) pairs, once each") {
    std::mt19937_64 g(41);
    const std::size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 255, 256, 257, 700};
    for (const std::size_t n : sizes)
        for (int kind = 0; kind < 3; ++kind) {
            INFO("n " << n << ", kind " << kind);
            const auto a = test_permutation(g, n, kind);
            const auto want = inversion_pairs(a);
            CHECK(detail::permutation_inversions(a) == want.size());
            CHECK(detail::inversion_count(items_at_positions(a), nullptr) == want.size());
            const auto by_insertion = detail::inversions_by_insertion(a, want.size());
            REQUIRE(by_insertion);
            CHECK(*by_insertion == want.size());
            if (!want.empty()) CHECK_FALSE(detail::inversions_by_insertion(a, want.size() - 1));
            std::vector<std::pair<std::uint32_t, std::uint32_t>> split, insertion;
            const auto collect = [](std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) {
                return [&out](const std::vector<detail::merge_item>& cur, std::size_t lo, std::size_t hi,
                              const detail::merge_item& later) {
                    for (std::size_t k = lo; k < hi; ++k) {
                        CHECK(cur[k].key > later.key);
                        out.emplace_back(cur[k].point, later.point);
                    }
                };
            };
            detail::for_each_permutation_inversion_range(items_at_positions(a), collect(split));
            detail::for_each_inversion_by_insertion(items_at_positions(a), collect(insertion));
            std::sort(split.begin(), split.end());
            std::sort(insertion.begin(), insertion.end());
            CHECK(split == want);
            CHECK(insertion == want);
            // the pairs at chosen indices of the order each meets them in: those pairs
            std::vector<std::uint64_t> targets;
            for (std::uint64_t t = 0; t < want.size(); t += 1 + g() % 7) targets.push_back(t);
            std::vector<std::pair<std::uint32_t, std::uint32_t>> at_split, at_insertion;
            detail::permutation_inversions_at(items_at_positions(a), targets,
                                              [&](std::uint32_t e, std::uint32_t l) { at_split.emplace_back(e, l); });
            detail::inversions_by_insertion_at(items_at_positions(a), targets,
                                               [&](std::uint32_t e, std::uint32_t l) { at_insertion.emplace_back(e, l); });
            CHECK(at_split.size() == targets.size());
            CHECK(at_insertion.size() == targets.size());
            for (const auto& p : at_split) CHECK(std::binary_search(want.begin(), want.end(), p));
            for (const auto& p : at_insertion) CHECK(std::binary_search(want.begin(), want.end(), p));
            std::sort(at_split.begin(), at_split.end());
            CHECK(std::adjacent_find(at_split.begin(), at_split.end()) == at_split.end());
        }
}

TEST_CASE("slope bands: the insertion listing and the sign sample against the merge and the O(n²) slopes") {
    std::mt19937_64 g(4141);
    for (int it = 0; it < 40; ++it) {
        std::vector<double> x(60 + g() % 200), y(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {  // distinct points: no weights
            x[i] = static_cast<double>(i) + (g() % 3 == 0 ? 0.0 : 0.5);
            y[i] = std::round((0.01 * x[i] + 0.3 * (static_cast<double>(g() % 1000) / 1000.0)) * 1e3) / 1e3;
        }
        const auto d = detail::slope_data_of(x.data(), y.data(), x.size());
        if (detail::weights_of(d)) continue;
        const auto all = sorted_slopes(x, y);
        const double a = all[all.size() / 2 - all.size() / 50], b = all[all.size() / 2 + all.size() / 50];
        const auto s = detail::band_of(d, a, b, nullptr, 4 * all.size());
        INFO("case " << it << ", band " << s.size());
        // the counts (split and insertion) are the merge's
        CHECK(s.below == detail::inversion_count(detail::items_of(s, [&](std::size_t p) { return s.point[p]; }), nullptr));
        CHECK(s.size() == detail::inversion_count(detail::items_of(s, [&](std::size_t p) { return s.rank[p]; }), nullptr));
        CHECK(s.size() > 0);
        CHECK(detail::few_inversions(s));
        std::vector<double> few, merged;
        detail::for_each_few_band_pair(d, s, [&](double v, std::uint64_t) { few.push_back(v); });
        detail::for_each_inversion_range(detail::items_of(s, [&](std::size_t p) { return s.rank[p]; }), nullptr,
                                         [&](const std::vector<detail::merge_item>& cur, std::size_t i, std::size_t mid,
                                             const detail::merge_item& later, const std::vector<std::uint64_t>&) {
                                             for (std::size_t k = i; k < mid; ++k)
                                                 merged.push_back(detail::pair_slope(d, cur[k].point, later.point));
                                         });
        std::sort(few.begin(), few.end());
        std::sort(merged.begin(), merged.end());
        REQUIRE(few.size() == merged.size());
        for (std::size_t k = 0; k < few.size(); ++k) CHECK(same_bits(few[k], merged[k]));
        // the positive band's sample: positive slopes of the data's pairs
        const auto pos = detail::band_of(d, 0x1p-460, std::numeric_limits<double>::infinity());
        detail::splitmix rng{static_cast<std::uint64_t>(it)};
        const auto sample = detail::sample_sign_band(d, pos, true, 500, rng);
        if (pos.size() < x.size() * x.size() / 8) {
            CHECK_FALSE(sample);
            continue;
        }
        REQUIRE(sample);
        CHECK(sample->size() == 500);
        for (const double v : *sample) CHECK((v > 0 && std::binary_search(all.begin(), all.end(), v)));
    }
}

TEST_CASE("Knight's count by ranks (n >= 512): the O(n²) count, with ties, signed zeros and a NaN-free shuffle") {
    std::mt19937_64 g(512);
    for (int it = 0; it < 12; ++it) {
        std::vector<double> x, y;
        tied_data(g, 512 + static_cast<std::size_t>(g() % 900), x, y);
        for (auto& v : y)
            if (g() % 5 == 0) v = (g() % 2) ? 0.0 : -0.0;  // -0 and +0 tie: no exchange
        if (it % 2) std::sort(x.begin(), x.end());
        INFO("case " << it << ", n " << x.size());
        const auto c = detail::kendall_counts_of(x.data(), y.data(), x.size());
        const auto r = detail::kendall_counts_reference(x.data(), y.data(), x.size());
        CHECK(c.dis == r.dis);
        CHECK(c.s == r.s);
        CHECK(c.ytie == r.ytie);
        CHECK(c.y1 == r.y1);
    }
    std::vector<double> a = {3.0, -0.0, 1.0, 0.0, -0.0, 2.0};
    CHECK(detail::merge_exchanges(a) == 7);  // 3 passes five, 1 passes the two zeros; -0 = +0
}

TEST_CASE("set_order_statistics: at each rank the value a sort puts there, ranks unsorted and repeated") {
    std::mt19937_64 g(4545);
    for (int it = 0; it < 30; ++it) {
        const std::size_t n = 1 + static_cast<std::size_t>(g() % 3000);
        std::vector<double> v(n);
        for (auto& x : v) {  // negatives, ties, near-equal bits; no zero (the callers' condition)
            const double u = static_cast<double>(1 + g() % 500) * (g() % 2 ? 1e-3 : -1e-3);
            x = g() % 7 == 0 ? std::nextafter(u, 1.0) : u;
        }
        std::vector<double> sorted = v;
        std::sort(sorted.begin(), sorted.end());
        std::vector<std::uint64_t> ranks = {n - 1, 0, n / 2, n / 2};
        for (int q = 0; q < 4; ++q) ranks.push_back(g() % n);
        detail::set_order_statistics(v, ranks);
        for (const auto r : ranks) CHECK(same_bits(v[static_cast<std::size_t>(r)], sorted[static_cast<std::size_t>(r)]));
    }
}

TEST_CASE("counted start bands: ordered when listed or sampled, as band_of with the same counts makes them") {
    // the start bands of slopes_at_ranks carry Kendall's counts and no
    // orders (counted_band); a step that samples or lists one gets the
    // orders band_of makes: the same positions, ranks and sample slopes
    std::mt19937_64 g(1207);
    for (int it = 0; it < 20; ++it) {
        std::vector<double> x, y;
        tied_data(g, 120 + static_cast<std::size_t>(g() % 200), x, y);
        const auto d = detail::slope_data_of(x.data(), y.data(), x.size());
        const bool negative = it % 2 == 0;
        const double lo = negative ? -std::numeric_limits<double>::infinity() : 0x1p-460;
        const double hi = negative ? -0x1p-460 : std::numeric_limits<double>::infinity();
        const std::pair<std::uint64_t, std::uint64_t> counts =
            negative ? std::make_pair(std::uint64_t(0), d.negative) : std::make_pair(d.nonpositive, d.pairs - d.nonpositive);
        const auto counted = detail::counted_band(lo, hi, counts);
        CHECK_FALSE(counted.ordered);
        CHECK(counted.point.empty());
        const auto full = detail::band_of(d, lo, hi, &counts);
        detail::slope_band cache;
        const auto& made = detail::ordered_band(d, counted, cache);
        CHECK(&made == &cache);
        CHECK(made.point == full.point);
        CHECK(made.rank == full.rank);
        CHECK(&detail::ordered_band(d, full, cache) == &full);  // an ordered band is itself
        if (counted.size() == 0) continue;
        detail::splitmix r1{static_cast<std::uint64_t>(it)}, r2{static_cast<std::uint64_t>(it)};
        const auto a = detail::sample_band(d, counted, 64, r1), b = detail::sample_band(d, full, 64, r2);
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) CHECK(same_bits(a[i], b[i]));
        for (const double v : a) CHECK((negative ? v < 0 : v > 0));  // the band's own sign
    }
}

TEST_CASE("b_ranks: exact key ties found inside key_order's near runs, as a check of every neighbour finds them") {
    // thresholds equal to exact slopes: y = 0.5·x on some points (their keys
    // at t = 0.5 tie exactly), others off the line; the ranks b_ranks gives
    // with key_order's `near` must be those of comparing every neighbour
    std::mt19937_64 g(4096);
    for (int it = 0; it < 30; ++it) {
        const std::size_t n = 40 + static_cast<std::size_t>(g() % 600);
        std::vector<double> x(n), y(n);
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = static_cast<double>(i);
            y[i] = g() % 3 ? 0.5 * x[i] : 0.5 * x[i] + static_cast<double>(g() % 7) - 3.0;
        }
        const auto d = detail::slope_data_of(x.data(), y.data(), n);
        std::vector<detail::exact_key> keys;
        std::vector<std::uint8_t> near;
        const auto by_b = detail::key_order(d, 0.5, keys, &near);
        REQUIRE(near.size() == d.x.size());
        std::vector<std::uint32_t> pos_of(d.x.size());
        for (std::size_t p = 0; p < pos_of.size(); ++p) pos_of[p] = static_cast<std::uint32_t>(d.x.size() - 1 - p);
        std::vector<std::uint32_t> got, want;
        detail::b_ranks(by_b, keys, near, pos_of, got);
        detail::b_ranks(by_b, keys, std::vector<std::uint8_t>(near.size(), 1), pos_of, want);
        CHECK(got == want);
        std::size_t tied = 0;  // the points on the line tie: each after the first is near
        for (std::size_t p = 1; p < by_b.size(); ++p)
            if (detail::compare_keys(keys[by_b[p]], keys[by_b[p - 1]]) == 0) {
                CHECK(near[p] == 1);
                ++tied;
            }
        CHECK(tied > n / 3);
    }
}
