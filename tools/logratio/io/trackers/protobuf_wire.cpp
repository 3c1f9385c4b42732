#include "protobuf_wire.hpp"

#include <logratio/core/error.hpp>

namespace logratio_cli::protobuf {

void fail(const origin& o, std::size_t offset, const char* what) {
    throw logratio::format_error(logratio::detail::concat(o.source ? *o.source : std::string("<bytes>"),
                                                          ": byte ", offset, ": protobuf: ", what));
}

bool reader::next(field& f) {
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

void reader::need(std::size_t n, std::size_t at) const {
    if (std::size_t(end_ - p_) < n) fail(where_, at, "fixed-width field runs past the end of its message");
}

std::uint64_t reader::varint() {
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

}  // namespace logratio_cli::protobuf
