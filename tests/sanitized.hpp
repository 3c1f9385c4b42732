#pragma once
// Test sizes under the sanitizers. A few tests are large only for statistical
// power (the KLL sketch's error bounds) or sweep density (every 61st float):
// in the ASan + UBSan and TSan builds (LOGRATIO_TEST_SANITIZED, set by
// tests/CMakeLists.txt) they run on a fraction of that size. The sanitizers
// find their errors on code paths, and the smaller sizes take the same paths
// (each use says why); the full sizes run in the g++ test preset.
#include <cstddef>

namespace test {

#ifdef LOGRATIO_TEST_SANITIZED
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif

/// n, or n / divisor under the sanitizers.
constexpr std::size_t sized(std::size_t n, std::size_t divisor = 4) { return sanitized ? n / divisor : n; }

}  // namespace test
