// doctest's implementation, compiled once for every test binary
// (tests/CMakeLists.txt: logratio_doctest); main() is test_main.cpp's.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
