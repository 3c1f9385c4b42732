#pragma once
// Exceptions thrown by logratio. Every message names what is wrong and where
// (tensor name, sequence/row, position/column, file offset).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "version.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// Base class of every logratio error.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Shapes, offsets, dtypes or options that do not fit together (thrown at
/// view construction, before any kernel runs).
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
template <class... Args>
std::string concat(const Args&... args) {
    std::ostringstream os;
    os.precision(17);
    (os << ... << args);
    return os.str();
}
}  // namespace detail

LOGRATIO_NAMESPACE_END
