#pragma once
// Splitting a view's sequences into contiguous parts of about equal token
// count, and running one task per part on its own thread (the first on the
// calling thread). Exceptions are rethrown on the caller, first part first.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "../core/view.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

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

/// The split -> run -> merge of every threaded accumulation: the sequences
/// of v cut into at most `threads` parts of about equal token count,
/// range(first, last) on each part in parallel, the partial results merged
/// in sequence order (a.merge(b)). One part runs on the calling thread.
template <class T, class M, class Range>
auto parallel_reduce(const paired_view<T, M>& v, unsigned threads, Range&& range) {
    const std::vector<std::uint64_t> cut = split_sequences(v, threads);
    const unsigned parts = static_cast<unsigned>(cut.size() - 1);
    std::vector<decltype(range(std::uint64_t(0), std::uint64_t(0)))> part(parts);
    run_parts(parts, [&](unsigned k) { part[k] = range(cut[k], cut[k + 1]); });
    auto total = std::move(part[0]);
    for (unsigned k = 1; k < parts; ++k) total.merge(part[k]);
    return total;
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
