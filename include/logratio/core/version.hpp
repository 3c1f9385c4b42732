#pragma once
// logratio version, and the inline ABI namespace that makes two vendored
// versions clash at link time instead of silently.
#define LOGRATIO_VERSION_MAJOR 0
#define LOGRATIO_VERSION_MINOR 1
#define LOGRATIO_VERSION_PATCH 0
#define LOGRATIO_VERSION_STRING "0.1.0"

#define LOGRATIO_NAMESPACE_BEGIN \
    namespace logratio {         \
    inline namespace v0_1 {
#define LOGRATIO_NAMESPACE_END \
    }                          \
    }
