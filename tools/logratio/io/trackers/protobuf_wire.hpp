#pragma once
// A small, bounds-checked reader of the protocol buffers wire format
// (https://protobuf.dev/programming-guides/encoding/): one message's fields in
// order, each as (number, wire type, value or byte range). Callers walk the few
// fields they know and skip the rest; nested messages are read by a new
// reader over the field's bytes, so the depth is the caller's (fixed) schema
// depth, never the input's. Every malformed byte (a varint over 10 bytes, a
// length past the end, field number 0, a group or an unknown wire type) is a
// logratio::format_error naming the source and the absolute byte offset.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <logratio/core/error.hpp>

namespace logratio_cli::protobuf {

enum class wire_type : std::uint8_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

/// One field as it appears on the wire. For varint / fixed64 / fixed32 the
/// value is in `number_bits`; for length-delimited, `data`/`size` delimit the
/// payload. `offset` is the absolute byte offset of the field's tag.
struct field {
    std::uint32_t number = 0;
    wire_type type = wire_type::varint;
    std::uint64_t number_bits = 0;
    const unsigned char* data = nullptr;
    std::size_t size = 0;
    std::size_t offset = 0;

    std::string_view bytes() const noexcept { return {reinterpret_cast<const char*>(data), size}; }
    std::int64_t as_int64() const noexcept { return static_cast<std::int64_t>(number_bits); }
    double as_double() const noexcept {
        double d;
        std::memcpy(&d, &number_bits, 8);
        return d;
    }
    float as_float() const noexcept {
        const auto u = static_cast<std::uint32_t>(number_bits);
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
};

/// Where a message lies: the name of the file (for errors) and the absolute
/// offset of the message's first byte in it.
struct origin {
    const std::string* source = nullptr;
    std::size_t base = 0;
};

/// format_error "<source>: byte <offset>: protobuf: <what>".
[[noreturn]] void fail(const origin& o, std::size_t offset, const char* what);

/// Reads little-endian fixed-width integers from unaligned bytes.
inline std::uint32_t load_le32(const unsigned char* p) noexcept {
    return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}
inline std::uint64_t load_le64(const unsigned char* p) noexcept {
    return std::uint64_t(load_le32(p)) | std::uint64_t(load_le32(p + 4)) << 32;
}

class reader {
public:
    reader(const unsigned char* data, std::size_t size, origin where) noexcept
        : p_(data), begin_(data), end_(data + size), where_(where) {}

    const origin& where() const noexcept { return where_; }
    std::size_t offset() const noexcept { return where_.base + std::size_t(p_ - begin_); }
    bool done() const noexcept { return p_ == end_; }

    /// The next field, or false at the end of the message (inline: the per-field step).
    bool next(field& f) {
        if (p_ == end_) return false;
        f.offset = offset();
        const std::uint64_t tag = varint();
        const auto type = static_cast<unsigned>(tag & 7u);
        const std::uint64_t number = tag >> 3;
        if (number == 0 || number > 0x1FFFFFFFu) fail(where_, f.offset, "invalid field number");
        f.number = static_cast<std::uint32_t>(number);
        f.data = nullptr;
        f.size = 0;
        switch (type) {
        case 0:
            f.type = wire_type::varint;
            f.number_bits = varint();
            break;
        case 1:
            f.type = wire_type::fixed64;
            need(8, f.offset);
            f.number_bits = load_le64(p_);
            p_ += 8;
            break;
        case 2: {
            f.type = wire_type::length_delimited;
            const std::uint64_t n = varint();
            if (n > std::uint64_t(end_ - p_)) fail(where_, f.offset, "length-delimited field runs past the end of its message");
            f.data = p_;
            f.size = static_cast<std::size_t>(n);
            p_ += n;
            break;
        }
        case 5:
            f.type = wire_type::fixed32;
            need(4, f.offset);
            f.number_bits = load_le32(p_);
            p_ += 4;
            break;
        default:
            fail(where_, f.offset, type == 3 || type == 4 ? "groups are not supported" : "unknown wire type");
        }
        return true;
    }

    /// A nested reader over `f`'s payload, with absolute offsets.
    reader nested(const field& f) const noexcept {
        return reader(f.data, f.size, origin{where_.source, where_.base + std::size_t(f.data - begin_)});
    }

    /// Throws unless `f` has wire type `t` (a field of the right number but
    /// the wrong type is corrupt input, not something to reinterpret).
    void expect(const field& f, wire_type t, const char* what) const {
        if (f.type != t) fail(where_, f.offset, what);
    }

private:
    void need(std::size_t n, std::size_t at) const {
        if (std::size_t(end_ - p_) < n) fail(where_, at, "fixed-width field runs past the end of its message");
    }
    std::uint64_t varint() {
        const std::size_t at = offset();
        std::uint64_t v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (p_ == end_) fail(where_, at, "varint runs past the end of its message");
            const unsigned char b = *p_++;
            if (shift == 63 && b > 1) fail(where_, at, "varint longer than 64 bits");
            v |= std::uint64_t(b & 0x7Fu) << shift;
            if (!(b & 0x80u)) return v;
        }
        fail(where_, at, "varint longer than 10 bytes");
    }

    const unsigned char* p_;
    const unsigned char* begin_;
    const unsigned char* end_;
    origin where_;
};

}  // namespace logratio_cli::protobuf
