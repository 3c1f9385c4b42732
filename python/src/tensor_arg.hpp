#pragma once
// One argument tensor as the module reads it, without a copy: anything with
// __dlpack__ (torch, JAX, CuPy, numpy >= 1.22) or the buffer protocol
// (numpy, array.array, memoryview). Shared by every bind_*.cpp.
//
// DLPack: the v0.x ABI that torch 1.13 exports (DLManagedTensor in a
// PyCapsule named "dltensor"); the structs below restate its documented
// layout (dlpack.h, github.com/dmlc/dlpack, v0.6/v0.8). The capsule is kept
// alive for the call and never renamed, so its own destructor releases the
// tensor. Tensors that require grad are detached first (torch refuses to
// export them; detach() shares the memory). A tensor on another device is an
// error that says to move it to the CPU.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace logratio_py {
namespace py = pybind11;

namespace dlpack {
struct device {
    std::int32_t device_type;  // 1 = kDLCPU, 2 = kDLCUDA, 3 = kDLCUDAHost, ...
    std::int32_t device_id;
};
struct data_type {
    std::uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool
    std::uint8_t bits;
    std::uint16_t lanes;
};
struct tensor {
    void* data;
    device dev;
    std::int32_t ndim;
    data_type dtype;
    std::int64_t* shape;
    std::int64_t* strides;  // in elements; null = C-contiguous
    std::uint64_t byte_offset;
};
struct managed_tensor {
    tensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(managed_tensor*);
};
}  // namespace dlpack

/// Element types the module distinguishes.
enum class dtype_code { f32, f64, f16, bf16, u16, boolean, u8, i8, i16, i32, i64, u32, u64, other };

struct tensor_arg {
    std::string name;        ///< the argument's name ("rollout", "mask", ...)
    std::string dtype_name;  ///< as the caller spells it: "torch.bfloat16", "int64"
    dtype_code dtype = dtype_code::other;
    std::size_t itemsize = 0;
    const void* data = nullptr;
    std::vector<std::int64_t> shape, strides;  ///< strides in elements
    bool is_torch = false;                     ///< outputs for it go back as torch tensors
    std::shared_ptr<void> keep;                ///< holds the memory (capsule or buffer) for the call

    std::int64_t numel() const;
    std::string shape_str() const;  ///< "[256, 4096]"
    /// "rollout (torch.bfloat16, shape [256, 4096])"
    std::string describe() const;
    /// Elements of the last dimension are adjacent (or there is at most one).
    bool unit_last_stride() const;
    /// Row-major with no gaps.
    bool c_contiguous() const;
};

/// Reads `obj` (TypeError naming `name` if it is not a tensor or array).
tensor_arg read_tensor(py::handle obj, const char* name);
/// None -> nullopt.
std::optional<tensor_arg> read_optional(py::handle obj, const char* name);

bool is_logprob_dtype(dtype_code c);
bool is_mask_dtype(dtype_code c);
/// "float32, float64, float16, bfloat16 (or uint16 holding bfloat16 bits)"
const char* logprob_dtypes_text();
const char* mask_dtypes_text();

/// threads as a Python int: >= 1 or ValueError.
unsigned check_threads(long threads);

}  // namespace logratio_py
