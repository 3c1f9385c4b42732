#pragma once
// Exceptions thrown by logratio. Every message names what is wrong and where
// (tensor name, sequence/row, position/column, file offset).
//
// One taxonomy: argument_error (options, arguments), shape_error (layouts),
// value_error (values, with their location), format_error (bytes).
//
// One empty-input rule: no masked-in token (no value, no row) is not an
// error. Counts are 0 and every statistic is undefined -- NaN in C++, null
// in JSON, None in Python's dicts (panel(), correct()'s metrics), nan in its
// arrays: the panel (SPEC: keys null or absent), the
// correction's metrics, quantiles (one NaN per probability asked), the KLL
// sketch's quantile/rank/min/max, the logits summary, moments' variance
// and standard deviations. Invalid arguments stay errors even then.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "version.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// Base class of every logratio error.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// An invalid option or argument: an unknown name (method, mode, level,
/// flavour), a number outside its range (a probability outside [0, 1], a
/// threshold <= 0, a sequence range past the view), or two states that
/// cannot merge because their options differ. Thrown before any data is
/// read.
class argument_error : public error {
public:
    using error::error;
};

/// Shapes, offsets or dtypes that do not fit together (thrown at view
/// construction, before any kernel runs).
class shape_error : public error {
public:
    using error::error;
};

/// A value that violates the input contract: NaN/Inf or positive log-prob.
class value_error : public error {
public:
    value_error(const std::string& what, std::string tensor, std::uint64_t sequence,
                std::uint64_t position, double value)
        : error(what), tensor_(std::move(tensor)), sequence_(sequence), position_(position),
          value_(value) {}
    const std::string& tensor() const noexcept { return tensor_; }
    std::uint64_t sequence() const noexcept { return sequence_; }
    std::uint64_t position() const noexcept { return position_; }
    double value() const noexcept { return value_; }

private:
    std::string tensor_;
    std::uint64_t sequence_, position_;
    double value_;
};

/// Malformed bytes: serialized state, or a file format.
class format_error : public error {
public:
    using error::error;
};

namespace detail {
/// Writes x to os; floating-point values in their shortest form that reads
/// back as the same value (1.1, not 1.1000000000000001; 1e-06).
template <class T>
void put_shortest(std::ostringstream& os, const T& x) {
    if constexpr (std::is_floating_point<T>::value) {
        char buf[64];
        const auto r = std::to_chars(buf, buf + sizeof buf, x);
        os.write(buf, r.ptr - buf);
    } else {
        os << x;
    }
}

/// The message of an error: its parts written one after another.
template <class... Args>
std::string concat(const Args&... args) {
    std::ostringstream os;
    (put_shortest(os, args), ...);
    return os.str();
}
}  // namespace detail

LOGRATIO_NAMESPACE_END
