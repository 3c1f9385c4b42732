// 16-bit storage types: exhaustive checks over all 65536 bit patterns.
#include "test_util.hpp"

#include <cstring>

TEST_CASE("float16 decode matches the IEEE definition for every bit pattern") {
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const float f = logratio::to_float(logratio::float16{static_cast<std::uint16_t>(h)});
        const int sign = (h >> 15) ? -1 : 1;
        const int e = (h >> 10) & 31;
        const int m = h & 1023;
        double want;
        if (e == 31) want = m ? std::nan("") : sign * HUGE_VAL;
        else if (e == 0) want = sign * std::ldexp(m, -24);
        else want = sign * std::ldexp(1024 + m, e - 25);
        CAPTURE(h);
        if (std::isnan(want)) CHECK(std::isnan(f));
        else CHECK(static_cast<double>(f) == want);
        if (!std::isnan(want)) CHECK(logratio::to_float16(f).bits == h);  // round trip
    }
}

TEST_CASE("float16 encode rounds to nearest even, overflows to inf") {
    CHECK(logratio::to_float16(65504.0f).bits == 0x7BFF);
    CHECK(logratio::to_float16(65520.0f).bits == 0x7C00);
    CHECK(logratio::to_float16(1.0f + 1.0f / 2048).bits == 0x3C00);             // tie -> even
    CHECK(logratio::to_float16(1.0f + 3.0f / 2048).bits == 0x3C02);             // tie -> even
    CHECK(logratio::to_float16(std::ldexp(1.0f, -25)).bits == 0x0000);         // tie -> even (0)
    CHECK(logratio::to_float16(std::ldexp(1.5f, -25)).bits == 0x0001);
}

TEST_CASE("bfloat16 decode is the upper half of a float, encode rounds to nearest even") {
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const float f = logratio::to_float(logratio::bfloat16{static_cast<std::uint16_t>(h)});
        std::uint32_t u;
        std::memcpy(&u, &f, 4);
        CHECK(u == (h << 16));
        if (!std::isnan(f)) CHECK(logratio::to_bfloat16(f).bits == h);
    }
    CHECK(logratio::to_bfloat16(1.00390625f).bits == 0x3F80);  // tie -> even
    CHECK(std::isnan(logratio::to_float(logratio::to_bfloat16(std::nanf("")))));
}
