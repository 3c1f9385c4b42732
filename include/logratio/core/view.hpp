#pragma once
// Non-owning views over the paired log-prob arrays (trainer, rollout) and the
// loss mask, in the two layouts RL trainers use:
//
//   padded  [B, T] row-major arrays + [B, T] mask; sequence s = row s.
//   packed  1-D arrays of N tokens + cu_seqlens offsets (S+1 entries,
//           0 = o_0 <= o_1 <= ... <= o_S = N, int32 or int64) + optional mask.
//
// Shapes and offsets are validated once, here, at construction (shape_error),
// and the mask's values (0 or 1, else value_error); kernels then trust the view.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>
#if __cplusplus >= 202002L
#include <span>
#endif

#include "dtype.hpp"
#include "error.hpp"

LOGRATIO_NAMESPACE_BEGIN

enum class layout { padded, packed };

namespace detail {
/// Whether each of `n` bytes is 0 or 1: OR of 8-byte words, one test at the
/// end (8 bytes a step even unvectorised; a byte loop with a compare and a
/// flag ran at a byte a cycle, ~0.4 ms a 2^20-token mask). A one-byte mask
/// (bool, uint8, int8: -1 is 0xFF) is binary exactly when no byte has a bit
/// other than the lowest.
inline bool bytes_are_binary(const void* data, std::uint64_t n) {
    const auto* b = static_cast<const unsigned char*>(data);
    std::uint64_t acc = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, b + i, 8);
        acc |= w;
    }
    for (; i < n; ++i) acc |= b[i];
    return (acc & 0xFEFEFEFEFEFEFEFEull) == 0;
}
}  // namespace detail

/// A view over paired log-probs with element type T and mask type M.
/// All indices and counts are 64-bit.
template <class T, class M = std::uint8_t>
class paired_view {
    static_assert(is_logprob_type<T>::value, "log-prob element type must be float, double, bfloat16 or float16");
    static_assert(is_mask_type<M>::value, "mask element type must be bool, an integer or a float");

public:
    using value_type = T;
    using mask_type = M;

    /// Padded [rows, cols] layout; `mask` may be null (every token counts).
    static paired_view padded(const T* train, const T* rollout, const M* mask, std::uint64_t rows,
                              std::uint64_t cols) {
        if (rows != 0 && cols > std::numeric_limits<std::uint64_t>::max() / rows)
            throw shape_error(detail::concat("padded view: shape [", rows, ", ", cols, "] overflows 64 bits"));
        const std::uint64_t n = rows * cols;
        check_pointers(train, rollout, n);
        paired_view v;
        v.train_ = train;
        v.rollout_ = rollout;
        v.mask_ = mask;
        v.size_ = n;
        v.layout_ = layout::padded;
        v.rows_ = rows;
        v.cols_ = cols;
        v.check_mask_binary();
        return v;
    }

    /// Packed layout: `n` tokens, `num_offsets` = S+1 offsets (int32 or int64),
    /// optional `mask` of n entries (null: every token counts).
    template <class O>
    static paired_view packed(const T* train, const T* rollout, std::uint64_t n, const O* cu_seqlens,
                              std::uint64_t num_offsets, const M* mask = nullptr) {
        static_assert(std::is_same<O, std::int32_t>::value || std::is_same<O, std::int64_t>::value,
                      "cu_seqlens must be int32 or int64");
        check_pointers(train, rollout, n);
        if (cu_seqlens == nullptr || num_offsets == 0)
            throw shape_error("packed view: cu_seqlens is empty (it needs S+1 >= 1 entries, starting with 0)");
        if (cu_seqlens[0] != 0)
            throw shape_error(detail::concat("packed view: cu_seqlens[0] = ", cu_seqlens[0], ", must be 0"));
        for (std::uint64_t i = 1; i < num_offsets; ++i) {
            if (cu_seqlens[i] < cu_seqlens[i - 1])
                throw shape_error(detail::concat("packed view: cu_seqlens is not monotone at index ", i, " (",
                                                 cu_seqlens[i - 1], " then ", cu_seqlens[i], ")"));
        }
        const O last = cu_seqlens[num_offsets - 1];
        if (static_cast<std::uint64_t>(last) != n)
            throw shape_error(detail::concat("packed view: cu_seqlens[", num_offsets - 1, "] = ", last,
                                             " but the log-prob arrays hold ", n, " tokens"));
        paired_view v;
        v.train_ = train;
        v.rollout_ = rollout;
        v.mask_ = mask;
        v.size_ = n;
        v.layout_ = layout::packed;
        v.rows_ = num_offsets - 1;
        v.offsets_ = cu_seqlens;
        v.offsets64_ = std::is_same<O, std::int64_t>::value;
        v.check_mask_binary();
        return v;
    }

    layout kind() const noexcept { return layout_; }
    /// Number of sequences (rows of the padded layout, segments of the packed one).
    std::uint64_t num_sequences() const noexcept { return rows_; }
    /// Total number of token slots (masked-in or not).
    std::uint64_t size() const noexcept { return size_; }
    /// Row length of the padded layout (0 for packed).
    std::uint64_t cols() const noexcept { return cols_; }
    const T* train() const noexcept { return train_; }
    const T* rollout() const noexcept { return rollout_; }
    const M* mask() const noexcept { return mask_; }
    bool has_mask() const noexcept { return mask_ != nullptr; }

    /// Flat index of the first token of sequence s (s <= num_sequences()).
    std::uint64_t sequence_begin(std::uint64_t s) const noexcept {
        if (layout_ == layout::padded) return s * cols_;
        return offsets64_ ? static_cast<std::uint64_t>(static_cast<const std::int64_t*>(offsets_)[s])
                          : static_cast<std::uint64_t>(static_cast<const std::int32_t*>(offsets_)[s]);
    }
    std::uint64_t sequence_end(std::uint64_t s) const noexcept { return sequence_begin(s + 1); }

    bool counts(std::uint64_t i) const noexcept { return mask_ == nullptr || mask_on(mask_[i]); }

    /// The same layout, offsets and mask over two other arrays of size()
    /// entries (e.g. the trainer's log-probs under the old weights).
    paired_view with_arrays(const T* train, const T* rollout) const {
        check_pointers(train, rollout, size_);
        paired_view v = *this;
        v.train_ = train;
        v.rollout_ = rollout;
        return v;
    }

    /// The same arrays, layout and offsets under another mask of size()
    /// entries (null: every token counts).
    template <class M2>
    paired_view<T, M2> with_mask(const M2* mask) const noexcept {
        paired_view<T, M2> v;
        v.train_ = train_;
        v.rollout_ = rollout_;
        v.mask_ = mask;
        v.size_ = size_;
        v.layout_ = layout_;
        v.rows_ = rows_;
        v.cols_ = cols_;
        v.offsets_ = offsets_;
        v.offsets64_ = offsets64_;
        return v;
    }

private:
    template <class, class>
    friend class paired_view;

    /// A mask holds 0 (left out) or 1 (counts), nothing else: 0.5, 2 or NaN
    /// would otherwise count silently (SPEC's "nonzero counts" made exact).
    /// One pass at construction, the kernels untouched; value_error naming
    /// the mask, the row (sequence) and the column (position).
    void check_mask_binary() const {
        if (mask_ == nullptr) return;
        if constexpr (sizeof(M) == 1)
            if (detail::bytes_are_binary(mask_, size_)) return;
        std::uint64_t bad = size_;
        // blocks without an early exit (the compiler vectorises them), then
        // the first bad entry of the first bad block
        constexpr std::uint64_t block = 4096;
        for (std::uint64_t b = 0; b < size_ && bad == size_; b += block) {
            const std::uint64_t e = size_ - b < block ? size_ : b + block;
            bool ok = true;
            for (std::uint64_t i = b; i < e; ++i) ok &= (mask_[i] == M(0)) | (mask_[i] == M(1));
            if (ok) continue;
            for (std::uint64_t i = b; i < e && bad == size_; ++i)
                if (!(mask_[i] == M(0) || mask_[i] == M(1))) bad = i;
        }
        if (bad == size_) return;
        std::uint64_t s = 0;  // the sequence holding flat index `bad`
        if (layout_ == layout::padded) s = cols_ ? bad / cols_ : 0;
        else
            while (s + 1 < rows_ && sequence_end(s) <= bad) ++s;
        const bool padded_layout = layout_ == layout::padded;
        const double x = static_cast<double>(mask_[bad]);
        throw value_error(detail::concat("mask: value ", x, " at ", padded_layout ? "row " : "sequence ", s,
                                         padded_layout ? ", column " : ", position ", bad - sequence_begin(s),
                                         " (flat index ", bad, ") is not 0 or 1 (a mask is binary: 1 counts, 0 leaves "
                                         "the token out)"),
                          "mask", s, bad - sequence_begin(s), x);
    }

    static void check_pointers(const T* train, const T* rollout, std::uint64_t n) {
        if (n != 0 && (train == nullptr || rollout == nullptr))
            throw shape_error("paired view: null train_logprobs or rollout_logprobs pointer for a non-empty view");
    }

    const T* train_ = nullptr;
    const T* rollout_ = nullptr;
    const M* mask_ = nullptr;
    std::uint64_t size_ = 0;
    layout layout_ = layout::padded;
    std::uint64_t rows_ = 0, cols_ = 0;
    const void* offsets_ = nullptr;
    bool offsets64_ = true;
};

// ---------------------------------------------------------------------------
// Construction from contiguous containers: std::vector, std::array,
// std::span (C++20), xtensor containers and xt::adapt views -- anything
// with data() and size() over contiguous memory.
namespace detail {
template <class C>
using element_t = std::remove_cv_t<std::remove_pointer_t<decltype(std::data(std::declval<const C&>()))>>;

template <class C>
void check_size(const C& c, std::uint64_t expected, const char* name) {
    const auto n = static_cast<std::uint64_t>(std::size(c));
    if (n != expected)
        throw shape_error(concat(name, ": ", n, " elements, expected ", expected));
}
}  // namespace detail

/// Padded view over containers of rows*cols elements each.
template <class CT, class CM>
auto padded(const CT& train, const CT& rollout, const CM& mask, std::uint64_t rows, std::uint64_t cols) {
    using T = detail::element_t<CT>;
    using M = detail::element_t<CM>;
    if (rows != 0 && cols > std::numeric_limits<std::uint64_t>::max() / rows)
        throw shape_error(detail::concat("padded view: shape [", rows, ", ", cols, "] overflows 64 bits"));
    detail::check_size(train, rows * cols, "train_logprobs");
    detail::check_size(rollout, rows * cols, "rollout_logprobs");
    detail::check_size(mask, rows * cols, "mask");
    return paired_view<T, M>::padded(std::data(train), std::data(rollout), std::data(mask), rows, cols);
}

/// Packed view over 1-D containers plus cu_seqlens (no mask: every token counts).
template <class CT, class CO>
auto packed(const CT& train, const CT& rollout, const CO& cu_seqlens) {
    using T = detail::element_t<CT>;
    detail::check_size(rollout, std::size(train), "rollout_logprobs");
    return paired_view<T, std::uint8_t>::packed(std::data(train), std::data(rollout), std::size(train),
                                                std::data(cu_seqlens), std::size(cu_seqlens));
}

/// Packed view over 1-D containers plus cu_seqlens and a 1-D mask.
template <class CT, class CO, class CM>
auto packed(const CT& train, const CT& rollout, const CO& cu_seqlens, const CM& mask) {
    using T = detail::element_t<CT>;
    using M = detail::element_t<CM>;
    detail::check_size(rollout, std::size(train), "rollout_logprobs");
    detail::check_size(mask, std::size(train), "mask");
    return paired_view<T, M>::packed(std::data(train), std::data(rollout), std::size(train), std::data(cu_seqlens),
                                     std::size(cu_seqlens), std::data(mask));
}

LOGRATIO_NAMESPACE_END
