#pragma once
// logratio::dispatch's level: which instruction set the dispatched calls run
// (dispatch.hpp), readable and settable without the kernels' headers
// (link logratio::dispatch).
#include <string>
#include <vector>

#include "../core/version.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace dispatch {

/// The instruction-set levels, narrowest first. `scalar` is the one-lane
/// reference path (the same kernels with plain doubles).
enum class level { scalar, sse2, avx2, avx512 };

/// Name of the level the calls run ("scalar", "sse2", "avx2", "avx512").
const char* simd_level();
level current_level();
/// Levels this CPU can run, narrowest first (always scalar and sse2).
std::vector<std::string> available_simd_levels();
/// Runs the calls at level `name` from now on; throws argument error
/// (logratio::error) if the name is unknown or the CPU lacks the level.
void set_simd_level(const std::string& name);

}  // namespace dispatch
LOGRATIO_NAMESPACE_END
