#pragma once
// The one place logratio includes xsimd (and through it the x86 intrinsic
// headers). GCC 12.2's <avx512fintrin.h> trips -Wmaybe-uninitialized on its
// own _mm512_undefined_* idiom (GCC bug 105593, fixed in 12.3 by pragmas in
// that header) wherever an AVX-512 kernel is inlined: with
// -march=x86-64-v4 -Wall a consumer saw ~500 such warnings through our
// kernels. The warning is located in the intrinsic header, so ignoring it
// for the span of that header's first inclusion silences exactly these
// (a consumer that included <immintrin.h> before us keeps GCC's behaviour).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <xsimd/xsimd.hpp>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
