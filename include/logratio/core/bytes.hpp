#pragma once
// Little-endian byte writer/reader for the serialized accumulators. The
// format is defined byte by byte (not a memcpy of a struct), so it is the
// same on every host; the reader checks every length and throws
// format_error on truncated or corrupt input.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "error.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

class byte_writer {
public:
    void u8(std::uint8_t v) { out_.push_back(v); }
    void u16(std::uint16_t v) { put(v, 2); }
    void u32(std::uint32_t v) { put(v, 4); }
    void u64(std::uint64_t v) { put(v, 8); }
    void f64(double v) {
        std::uint64_t u;
        std::memcpy(&u, &v, 8);
        put(u, 8);
    }
    // resize + memcpy, not insert(): g++ 12 at -O3 reports a false
    // -Wstringop-overflow for insert() into the still-empty vector.
    void raw(const char* s, std::size_t n) {
        if (n == 0) return;
        const std::size_t at = out_.size();
        out_.resize(at + n);
        std::memcpy(out_.data() + at, s, n);
    }
    std::vector<std::uint8_t> take() { return std::move(out_); }

private:
    void put(std::uint64_t v, int n) {
        for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }
    std::vector<std::uint8_t> out_;
};

/// put/get of the plain field types, so that an accumulator's field list
/// (one visit_fields) serves both serialize and deserialize.
inline void put(byte_writer& w, std::uint64_t v) { w.u64(v); }
inline void put(byte_writer& w, double v) { w.f64(v); }

class byte_reader {
public:
    byte_reader(const void* p, std::size_t n, const char* what)
        : p_(static_cast<const std::uint8_t*>(p)), n_(p == nullptr ? 0 : n), what_(what) {}
    std::uint8_t u8() { return static_cast<std::uint8_t>(get(1)); }
    std::uint16_t u16() { return static_cast<std::uint16_t>(get(2)); }
    std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
    std::uint64_t u64() { return get(8); }
    double f64() {
        const std::uint64_t u = get(8);
        double v;
        std::memcpy(&v, &u, 8);
        return v;
    }
    void expect_magic(const char* magic, std::size_t n) {
        need(n);
        if (std::memcmp(p_ + pos_, magic, n) != 0)
            throw format_error(concat(what_, ": bad magic bytes at offset ", pos_, " (not a ", what_, ")"));
        pos_ += n;
    }
    /// The preamble of every serialized state: 4 magic bytes, u16 version.
    void expect_header(const char* magic, std::uint16_t version) { expect_header(magic, version, version); }
    /// The same for a format whose versions [oldest, newest] are all read;
    /// returns the state's version.
    std::uint16_t expect_header(const char* magic, std::uint16_t oldest, std::uint16_t newest) {
        expect_magic(magic, 4);
        const std::uint16_t v = u16();
        if (v < oldest || v > newest)
            fail(concat("unsupported format version ", v, " (this build reads ", oldest,
                        newest == oldest ? "" : newest == oldest + 1 ? " and " : " to ",
                        newest == oldest ? std::string() : std::to_string(newest), ")"));
        return v;
    }
    std::size_t position() const noexcept { return pos_; }
    /// Moves past n bytes (checked).
    void skip(std::size_t n) {
        if (n > n_ - pos_) fail(concat("cannot skip ", n, " bytes, ", n_ - pos_, " remain"));
        pos_ += n;
    }
    std::size_t remaining() const noexcept { return n_ - pos_; }
    void expect_end() const {
        if (pos_ != n_)
            throw format_error(concat(what_, ": ", n_ - pos_, " trailing bytes after offset ", pos_));
    }
    [[noreturn]] void fail(const std::string& msg) const {
        throw format_error(concat(what_, ": ", msg, " (at offset ", pos_, ")"));
    }

private:
    void need(std::size_t k) const {
        if (k > n_ - pos_)
            throw format_error(concat(what_, ": truncated: needs ", k, " more bytes at offset ", pos_, ", has ",
                                      n_ - pos_));
    }
    std::uint64_t get(int k) {
        need(static_cast<std::size_t>(k));
        std::uint64_t v = 0;
        for (int i = 0; i < k; ++i) v |= static_cast<std::uint64_t>(p_[pos_ + i]) << (8 * i);
        pos_ += static_cast<std::size_t>(k);
        return v;
    }
    const std::uint8_t* p_;
    std::size_t n_;
    std::size_t pos_ = 0;
    const char* what_;
};

inline void get(byte_reader& r, std::uint64_t& v) { v = r.u64(); }
inline void get(byte_reader& r, double& v) { v = r.f64(); }

}  // namespace detail
LOGRATIO_NAMESPACE_END
