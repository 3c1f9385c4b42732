#pragma once
// Splitting a view's sequences into blocks, and running the blocks on
// threads. The blocks depend on the data only (about `block_tokens` tokens
// each, whole sequences), never on the thread count: every block is reduced
// on its own and the blocks are merged in sequence order, so a threaded
// result is bit-identical at 1, 2 or 64 threads (and on a machine with
// another core count). Exceptions are rethrown on the caller, first part
// first.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "../core/view.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// Tokens per block of the threaded reductions: large enough that a block's
/// fixed costs (its accumulator, its shift, the abs-max search in one
/// sequence) are lost in the noise, small enough that 2^25 tokens give 32
/// blocks to balance over the threads.
constexpr std::uint64_t block_tokens = std::uint64_t(1) << 20;

/// Boundaries cut[0] = 0 < ... < cut[parts] = S of at most `threads`
/// parts; a sequence is never split.
template <class T, class M>
std::vector<std::uint64_t> split_sequences(const paired_view<T, M>& v, unsigned threads) {
    const std::uint64_t S = v.num_sequences();
    const unsigned parts = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, S)));
    std::vector<std::uint64_t> cut(parts + 1, S);
    cut[0] = 0;
    for (unsigned k = 1; k < parts; ++k) {
        // first sequence whose begin is at or past k/parts of the tokens
        const std::uint64_t target = v.size() / parts * k;
        std::uint64_t lo = cut[k - 1], hi = S;
        while (lo < hi) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            if (v.sequence_begin(mid) < target) lo = mid + 1;
            else hi = mid;
        }
        cut[k] = lo;
    }
    return cut;
}

/// Runs task(k) for k in [0, parts), in parallel.
template <class F>
void run_parts(unsigned parts, F&& task) {
    std::vector<std::exception_ptr> err(parts);
    std::vector<std::thread> pool;
    for (unsigned k = 1; k < parts; ++k)
        pool.emplace_back([&, k] {
            try {
                task(k);
            } catch (...) {
                err[k] = std::current_exception();
            }
        });
    try {
        if (parts) task(0u);
    } catch (...) {
        err[0] = std::current_exception();
    }
    for (auto& t : pool) t.join();
    for (auto& e : err)
        if (e) std::rethrow_exception(e);
}

/// Runs task(b, e) on [first, last) cut into equal slices, in parallel: one
/// per thread, at most one per entry, at least one.
template <class F>
void run_slices(std::uint64_t first, std::uint64_t last, unsigned threads, F&& task) {
    const std::uint64_t n = last - first;
    const unsigned parts =
        static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(std::max(threads, 1u), n)));
    run_parts(parts, [&](unsigned k) { task(first + n / parts * k, k + 1 == parts ? last : first + n / parts * (k + 1)); });
}

/// The blocks of v: boundaries cut[0] = 0 < ... < cut[B] = S, about
/// block_tokens tokens each (at most one block per sequence; sequences are
/// never split). A function of the view's offsets only.
template <class T, class M>
std::vector<std::uint64_t> split_blocks(const paired_view<T, M>& v) {
    const std::uint64_t blocks = (v.size() + block_tokens - 1) / block_tokens;
    const std::uint64_t b = std::max<std::uint64_t>(1, std::min<std::uint64_t>(blocks, 1u << 16));
    return split_sequences(v, static_cast<unsigned>(b));
}

/// How many runs of blocks `threads` threads take: one per thread, at most
/// one per block, at least one.
inline unsigned block_runs(std::size_t blocks, unsigned threads) noexcept {
    return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, blocks)));
}
/// The first block of run k of `runs` (run k is [run_begin(k), run_begin(k + 1))).
inline std::size_t run_begin(std::size_t blocks, unsigned runs, unsigned k) noexcept { return blocks * k / runs; }

/// Runs task(run, first_block, last_block) for the blocks [0, blocks) cut
/// into block_runs(blocks, threads) contiguous runs, one per thread.
template <class F>
void run_block_runs(std::size_t blocks, unsigned threads, F&& task) {
    const unsigned runs = block_runs(blocks, threads);
    run_parts(runs, [&](unsigned k) { task(k, run_begin(blocks, runs, k), run_begin(blocks, runs, k + 1)); });
}

/// The split -> run -> merge of every threaded accumulation: range(first,
/// last) on each block of v (split_blocks), the blocks spread over at most
/// `threads` threads, the partial results merged in sequence order
/// (a.merge(b)). Bit-identical at any thread count.
template <class T, class M, class Range>
auto parallel_reduce(const paired_view<T, M>& v, unsigned threads, Range&& range) {
    const std::vector<std::uint64_t> cut = split_blocks(v);
    const std::size_t blocks = cut.size() - 1;
    std::vector<decltype(range(std::uint64_t(0), std::uint64_t(0)))> part(blocks);
    run_block_runs(blocks, threads, [&](unsigned, std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) part[b] = range(cut[b], cut[b + 1]);
    });
    auto total = std::move(part[0]);
    for (std::size_t b = 1; b < blocks; ++b) total.merge(part[b]);
    return total;
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
