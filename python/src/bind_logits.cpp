// logits: entropy, KL both ways, TV and the sampled token's log-probs from
// two logit matrices ([N, V] or [B, T, V]; bf16, fp16, float or double).
#include <cmath>
#include <cstring>

#include <logratio/core/visit.hpp>

#include "bindings.hpp"
#include "paired_input.hpp"

namespace logratio_py {
namespace {

/// A 2-D [rows, V] reading of a logits tensor: rows any stride apart,
/// elements adjacent. [B, T, V] is read as [B*T, V] when T rows are evenly
/// spaced across the batch dimension.
struct logits_matrix {
    const void* data = nullptr;
    std::uint64_t rows = 0, cols = 0, stride = 0;
    std::vector<char> copy;
};

logits_matrix matrix_of(const tensor_arg& t) {
    if (!is_logprob_dtype(t.dtype))
        throw py::type_error(t.describe() + ": dtype " + t.dtype_name + " is not supported for logits (" +
                             logprob_dtypes_text() + ")");
    if (t.shape.size() != 2 && t.shape.size() != 3)
        throw py::value_error(t.describe() + ": expected logits of shape [N, V] or [B, T, V]");
    logits_matrix m;
    const std::size_t d = t.shape.size();
    m.cols = std::uint64_t(t.shape[d - 1]);
    m.rows = std::uint64_t(t.numel()) / std::max<std::uint64_t>(m.cols, 1);
    if (m.cols == 0) m.rows = d == 2 ? std::uint64_t(t.shape[0]) : std::uint64_t(t.shape[0] * t.shape[1]);
    std::int64_t stride = t.strides[d - 2];
    bool in_place = t.unit_last_stride() && stride >= std::int64_t(m.cols);
    if (d == 3 && t.shape[1] > 0 && t.shape[0] > 1 && t.strides[0] != t.strides[1] * t.shape[1]) in_place = false;
    if (t.shape[d - 2] <= 1 && (d == 2 || t.shape[0] <= 1)) stride = std::int64_t(m.cols), in_place = t.unit_last_stride();
    if (in_place) {
        m.data = t.data;
        m.stride = std::uint64_t(stride);
        return m;
    }
    // Odd strides: one contiguous copy.
    m.copy.resize(std::size_t(t.numel()) * t.itemsize);
    std::vector<std::int64_t> idx(d, 0);
    for (std::int64_t i = 0; i < t.numel(); ++i) {
        std::int64_t off = 0;
        for (std::size_t k = 0; k < d; ++k) off += idx[k] * t.strides[k];
        std::memcpy(m.copy.data() + std::size_t(i) * t.itemsize,
                    static_cast<const char*>(t.data) + off * std::int64_t(t.itemsize), t.itemsize);
        for (std::size_t k = d; k-- > 0;) {
            if (++idx[k] < t.shape[k]) break;
            idx[k] = 0;
        }
    }
    m.data = m.copy.data();
    m.stride = m.cols;
    return m;
}

std::vector<std::int64_t> token_ids(const tensor_arg& t, std::uint64_t rows) {
    if (t.dtype != dtype_code::i32 && t.dtype != dtype_code::i64)
        throw py::type_error(t.describe() + ": dtype " + t.dtype_name + " is not supported for token ids (int32 or int64)");
    if (std::uint64_t(t.numel()) != rows)
        throw py::value_error(t.describe() + ": needs one token id per logit row (" + std::to_string(rows) + ")");
    std::vector<std::int64_t> out(rows);
    std::vector<std::int64_t> idx(t.shape.size(), 0);
    for (std::uint64_t i = 0; i < rows; ++i) {
        std::int64_t off = 0;
        for (std::size_t k = 0; k < t.shape.size(); ++k) off += idx[k] * t.strides[k];
        const char* p = static_cast<const char*>(t.data) + off * std::int64_t(t.itemsize);
        if (t.dtype == dtype_code::i64) std::memcpy(&out[i], p, 8);
        else { std::int32_t v; std::memcpy(&v, p, 4); out[i] = v; }
        for (std::size_t k = t.shape.size(); k-- > 0;) {
            if (++idx[k] < t.shape[k]) break;
            idx[k] = 0;
        }
    }
    return out;
}

template <class T>
void run(const logits_matrix& a, const logits_matrix& b, const std::int64_t* tokens, logratio::logits_row* out,
         const logratio::logits_options& o, unsigned threads) {
    const logratio::logits_view<T> va(static_cast<const T*>(a.data), a.rows, a.cols, a.stride);
    const logratio::logits_view<T> vb(static_cast<const T*>(b.data), b.rows, b.cols, b.stride);
    logratio::dispatch::compare_logits(va, vb, tokens, out, o, threads);
}

py::dict logits(py::object train, py::object rollout, py::object tokens, double temperature, long threads) {
    const unsigned nt = check_threads(threads);
    if (!(temperature > 0.0) || !std::isfinite(temperature))
        throw py::value_error("temperature must be a positive finite number, got " +
                              std::string(py::repr(py::float_(temperature))));
    const tensor_arg ta = read_tensor(train, "train");
    const tensor_arg ra = rollout.is_none() ? ta : read_tensor(rollout, "rollout");
    if (ta.dtype != ra.dtype && !(is_logprob_dtype(ta.dtype) && is_logprob_dtype(ra.dtype) &&
                                  (ta.dtype == dtype_code::u16 || ra.dtype == dtype_code::u16) &&
                                  (ta.dtype == dtype_code::bf16 || ra.dtype == dtype_code::bf16)))
        throw py::type_error("train and rollout must have the same dtype: train is " + ta.dtype_name + ", rollout is " +
                             ra.dtype_name);
    if (ta.shape != ra.shape)
        throw py::value_error("rollout has shape " + ra.shape_str() + " but train has shape " + ta.shape_str());
    const logits_matrix a = matrix_of(ta), b = matrix_of(ra);
    std::vector<std::int64_t> ids;
    if (!tokens.is_none()) ids = token_ids(read_tensor(tokens, "tokens"), a.rows);
    std::vector<logratio::logits_row> rows(a.rows);
    logratio::logits_options o;
    o.temperature = temperature;
    {
        py::gil_scoped_release nogil;
        const std::int64_t* t = ids.empty() ? nullptr : ids.data();
        logratio::visit_value_type(value_type_of(ta.dtype),
                                   [&](auto tag) { run<decltype(tag)>(a, b, t, rows.data(), o, nt); });
    }
    std::vector<std::int64_t> shape(ta.shape.begin(), ta.shape.end() - 1);
    auto column = [&](auto get) {
        using E = decltype(get(rows[0]));
        auto arr = new_array<E>(shape);
        E* p = arr.mutable_data();
        for (std::size_t i = 0; i < rows.size(); ++i) p[i] = get(rows[i]);
        return arr;
    };
    py::dict d;
    d["train_entropy"] = column([](const auto& r) { return r.train_entropy; });
    d["rollout_entropy"] = column([](const auto& r) { return r.rollout_entropy; });
    d["kl_train_rollout"] = column([](const auto& r) { return r.kl_train_rollout; });
    d["kl_rollout_train"] = column([](const auto& r) { return r.kl_rollout_train; });
    d["tv"] = column([](const auto& r) { return r.tv; });
    d["argmax_match"] = column([](const auto& r) { return r.argmax_match; });
    d["train_argmax"] = column([](const auto& r) { return std::int64_t(r.train_argmax); });
    d["rollout_argmax"] = column([](const auto& r) { return std::int64_t(r.rollout_argmax); });
    if (!ids.empty()) {
        d["train_logprob"] = column([](const auto& r) { return r.train_logprob; });
        d["rollout_logprob"] = column([](const auto& r) { return r.rollout_logprob; });
        d["sampled_prob_gap"] = column([](const auto& r) { return r.sampled_prob_gap; });
    }
    return d;
}

}  // namespace

void bind_logits(py::module_& m) {
    m.def("logits", &logits, py::arg("train"), py::arg("rollout") = py::none(), py::arg("tokens") = py::none(),
          py::arg("temperature") = 1.0, py::arg("threads") = 1);
}

}  // namespace logratio_py
