#pragma once
// The one list of the kernels logratio::dispatch holds. Everything else is
// generated from it: the table's slots (kernel_table.hpp), the declarations
// (dispatch.hpp), the forwarding definitions and their instantiations
// (src/dispatch/dispatch.cpp), and logratio::kernels' names and fallbacks
// (kernels.hpp). Adding a kernel is one line here plus its entry in the level
// file that fills its slot (src/dispatch/level_<component>.cpp).
//
// LOGRATIO_VIEW_KERNELS(X, T, M): the kernels over a paired_view<T, M>;
// LOGRATIO_TYPE_KERNELS(X, T): those over one element type T. Each entry is
//   X(return type, name, header-only function,
//     (parameters with their defaults), (parameters), (arguments))
// T and M are the list's parameters, so one list gives both the templates
// (X, T, M) and their instantiations (X, float, std::uint8_t).
#include <cstdint>
#include <vector>

#define LOGRATIO_VIEW_KERNELS(X, T, M)                                                                                \
    X(panel_accumulator, accumulate_panel, logratio::accumulate_panel,                                             \
      (const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1),                             \
      (const paired_view<T, M>& v, const panel_options& o, unsigned threads), (v, o, threads))                    \
    X(panel_accumulator, accumulate_panel_range, logratio::accumulate_panel_range,                                 \
      (const paired_view<T, M>& v, std::uint64_t first, std::uint64_t last, const panel_options& o = {}),          \
      (const paired_view<T, M>& v, std::uint64_t first, std::uint64_t last, const panel_options& o),               \
      (v, first, last, o))                                                                                          \
    X(doctor::diagnosis, diagnose, logratio::doctor::diagnose,                                                     \
      (const paired_view<T, M>& v, const doctor::diagnose_options& o = {}),                                        \
      (const paired_view<T, M>& v, const doctor::diagnose_options& o), (v, o))                                     \
    X(correction_result, correct, logratio::correct,                                                               \
      (const paired_view<T, M>& v, const correction_options& o, float* weights, std::uint8_t* mask,                \
       unsigned threads = 1),                                                                                       \
      (const paired_view<T, M>& v, const correction_options& o, float* weights, std::uint8_t* mask,                \
       unsigned threads),                                                                                           \
      (v, o, weights, mask, threads))                                                                               \
    X(std::vector<double>, quantiles, logratio::quantiles,                                                         \
      (const paired_view<T, M>& v, quantile_of what, const std::vector<double>& probs,                             \
       const quantile_options& o = {}),                                                                             \
      (const paired_view<T, M>& v, quantile_of what, const std::vector<double>& probs, const quantile_options& o), \
      (v, what, probs, o))                                                                                          \
    X(void, add_panel_quantiles, logratio::add_panel_quantiles,                                                    \
      (panel & p, const paired_view<T, M>& v, nonfinite_policy nonfinite = nonfinite_policy::raise),               \
      (panel & p, const paired_view<T, M>& v, nonfinite_policy nonfinite), (p, v, nonfinite))                      \
    X(panel, compute_panel_with_quantiles, logratio::compute_panel_with_quantiles,                                 \
      (const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1),                             \
      (const paired_view<T, M>& v, const panel_options& o, unsigned threads), (v, o, threads))                    \
    X(mismatch_split, compute_mismatch_split, logratio::compute_mismatch_split,                                    \
      (const paired_view<T, M>& v, const T* old_logprobs, const panel_options& o = {}, unsigned threads = 1),      \
      (const paired_view<T, M>& v, const T* old_logprobs, const panel_options& o, unsigned threads),               \
      (v, old_logprobs, o, threads))

#define LOGRATIO_TYPE_KERNELS(X, T)                                                                       \
    X(void, compare_logits, logratio::compare_logits,                                                  \
      (const logits_view<T>& train, const logits_view<T>& rollout, const std::int64_t* tokens,         \
       logits_row* out, const logits_options& o = {}, unsigned threads = 1),                           \
      (const logits_view<T>& train, const logits_view<T>& rollout, const std::int64_t* tokens,         \
       logits_row* out, const logits_options& o, unsigned threads),                                    \
      (train, rollout, tokens, out, o, threads))

// The element and mask types dispatch holds: X(T) for each element type,
// and each with a byte and a float mask.
#define LOGRATIO_DISPATCH_ELEMENT_TYPES(X) X(float) X(double) X(float16) X(bfloat16)
#define LOGRATIO_DISPATCH_MASK_TYPES(X, T) X(T, std::uint8_t) X(T, float)
