// Reading argument tensors (see tensor_arg.hpp).
#include "tensor_arg.hpp"

#include <Python.h>

#include <sstream>
#include <stdexcept>

namespace logratio_py {
namespace {

dtype_code from_dlpack(const dlpack::data_type& t) {
    if (t.lanes != 1) return dtype_code::other;
    switch (t.code) {
        case 0:
            return t.bits == 8 ? dtype_code::i8 : t.bits == 16 ? dtype_code::i16 : t.bits == 32 ? dtype_code::i32
                   : t.bits == 64 ? dtype_code::i64 : dtype_code::other;
        case 1:
            return t.bits == 8 ? dtype_code::u8 : t.bits == 16 ? dtype_code::u16 : t.bits == 32 ? dtype_code::u32
                   : t.bits == 64 ? dtype_code::u64 : dtype_code::other;
        case 2:
            return t.bits == 16 ? dtype_code::f16 : t.bits == 32 ? dtype_code::f32 : t.bits == 64 ? dtype_code::f64
                                                                                                   : dtype_code::other;
        case 4: return t.bits == 16 ? dtype_code::bf16 : dtype_code::other;
        case 6: return t.bits == 8 ? dtype_code::boolean : dtype_code::other;
        default: return dtype_code::other;
    }
}

/// A struct-module format code ("<f", "=H", "?") with its item size.
dtype_code from_format(std::string f, std::size_t itemsize) {
    while (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<' || f[0] == '!')) f.erase(0, 1);
    if (f.size() != 1) return dtype_code::other;
    switch (f[0]) {
        case 'f': return dtype_code::f32;
        case 'd': return dtype_code::f64;
        case 'e': return dtype_code::f16;
        case '?': return dtype_code::boolean;
        case 'B': return dtype_code::u8;
        case 'b': return dtype_code::i8;
        case 'h': return dtype_code::i16;
        case 'H': return dtype_code::u16;
        case 'i': return itemsize == 4 ? dtype_code::i32 : dtype_code::other;
        case 'I': return itemsize == 4 ? dtype_code::u32 : dtype_code::other;
        case 'l':
        case 'q': return itemsize == 8 ? dtype_code::i64 : itemsize == 4 ? dtype_code::i32 : dtype_code::other;
        case 'L':
        case 'Q': return itemsize == 8 ? dtype_code::u64 : itemsize == 4 ? dtype_code::u32 : dtype_code::other;
        default: return dtype_code::other;
    }
}

std::size_t size_of(dtype_code c) {
    switch (c) {
        case dtype_code::f64: case dtype_code::i64: case dtype_code::u64: return 8;
        case dtype_code::f32: case dtype_code::i32: case dtype_code::u32: return 4;
        case dtype_code::f16: case dtype_code::bf16: case dtype_code::u16: case dtype_code::i16: return 2;
        default: return 1;
    }
}

/// str(obj.dtype) when the object has one (torch.bfloat16, int64), else the format.
std::string dtype_name_of(py::handle obj, const std::string& fallback) {
    if (py::hasattr(obj, "dtype")) {
        try {
            return py::str(obj.attr("dtype"));
        } catch (const py::error_already_set&) {
        }
    }
    return fallback;
}

std::string type_name(py::handle obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

tensor_arg from_buffer(py::handle obj, const char* name) {
    auto info = std::make_shared<py::buffer_info>(py::reinterpret_borrow<py::buffer>(obj).request());
    tensor_arg t;
    t.name = name;
    t.itemsize = std::size_t(info->itemsize);
    t.dtype = from_format(info->format, t.itemsize);
    t.dtype_name = dtype_name_of(obj, "format '" + info->format + "'");
    t.data = info->ptr;
    for (py::ssize_t d = 0; d < info->ndim; ++d) {
        t.shape.push_back(info->shape[std::size_t(d)]);
        const py::ssize_t s = info->strides[std::size_t(d)];
        if (s % info->itemsize != 0)
            throw py::value_error(std::string(name) + ": byte stride " + std::to_string(s) +
                                  " is not a multiple of the item size " + std::to_string(info->itemsize));
        t.strides.push_back(s / info->itemsize);
    }
    t.keep = info;
    return t;
}

/// A DLPack device as torch spells it: "cuda:0", "rocm:1" (dlpack.h's
/// DLDeviceType codes), or "DLPack device type 12:0" for the rare others.
std::string device_name(int type, int id) {
    const char* n = nullptr;
    switch (type) {
        case 1: n = "cpu"; break;
        case 2: n = "cuda"; break;
        case 3: n = "cuda_host"; break;
        case 4: n = "opencl"; break;
        case 7: n = "vulkan"; break;
        case 8: n = "metal"; break;
        case 9: n = "vpi"; break;
        case 10: n = "rocm"; break;
        case 11: n = "rocm_host"; break;
        case 13: n = "cuda_managed"; break;
        case 14: n = "oneapi"; break;
        case 15: n = "webgpu"; break;
        case 16: n = "hexagon"; break;
        default: break;
    }
    return (n ? std::string(n) : "DLPack device type " + std::to_string(type)) + ":" + std::to_string(id);
}

[[noreturn]] void throw_not_on_cpu(const char* name, int type, int id) {
    throw py::value_error(std::string(name) + ": a " + device_name(type, id) +
                          " tensor: logratio computes on the CPU; pass " + name + ".cpu() (or .to('cpu'))");
}

/// The DLPack device check, before asking for the capsule.
void require_cpu(py::handle obj, const char* name) {
    if (!py::hasattr(obj, "__dlpack_device__")) return;
    const py::tuple dev = obj.attr("__dlpack_device__")();
    const int type = py::int_(dev[0]).cast<int>(), id = dev.size() > 1 ? py::int_(dev[1]).cast<int>() : 0;
    if (type == 1 || type == 3) return;  // kDLCPU, kDLCUDAHost (pinned host memory)
    throw_not_on_cpu(name, type, id);
}

tensor_arg from_dlpack_object(py::handle obj_in, const char* name) {
    py::object obj = py::reinterpret_borrow<py::object>(obj_in);
    // torch refuses to export tensors that require grad; detach() shares the memory.
    if (py::hasattr(obj, "requires_grad") && py::hasattr(obj, "detach") && obj.attr("requires_grad").cast<bool>())
        obj = obj.attr("detach")();
    require_cpu(obj, name);
    const std::string dtype_name = dtype_name_of(obj, "");
    bool bool_as_bytes = false;
    if (dtype_name == "torch.bool" && py::hasattr(obj, "view")) {
        // torch 1.13 does not export bool through DLPack; its bytes are 0/1.
        obj = obj.attr("view")(py::module_::import("torch").attr("uint8"));
        bool_as_bytes = true;
    }
    py::object cap;
    try {
        cap = obj.attr("__dlpack__")();
    } catch (py::error_already_set& e) {
        throw py::type_error(std::string(name) + ": cannot be read through DLPack (" + e.what() + ")");
    }
    auto* m = static_cast<dlpack::managed_tensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
    if (m == nullptr) {
        PyErr_Clear();
        throw py::type_error(std::string(name) + ": __dlpack__ did not return a 'dltensor' capsule");
    }
    const dlpack::tensor& d = m->dl_tensor;
    if (d.dev.device_type != 1 && d.dev.device_type != 3) throw_not_on_cpu(name, d.dev.device_type, d.dev.device_id);
    tensor_arg t;
    t.name = name;
    t.dtype = bool_as_bytes ? dtype_code::boolean : from_dlpack(d.dtype);
    t.itemsize = t.dtype == dtype_code::other ? std::size_t((d.dtype.bits + 7) / 8) : size_of(t.dtype);
    t.dtype_name = !dtype_name.empty() ? dtype_name
                                       : "DLPack code " + std::to_string(d.dtype.code) + " bits " +
                                             std::to_string(d.dtype.bits);
    t.data = static_cast<const char*>(d.data) + d.byte_offset;
    t.shape.assign(d.shape, d.shape + d.ndim);
    t.strides.resize(std::size_t(d.ndim));
    std::int64_t step = 1;
    for (std::int32_t k = d.ndim - 1; k >= 0; --k) {
        t.strides[std::size_t(k)] = d.strides ? d.strides[k] : step;
        step *= d.shape[k];
    }
    t.is_torch = type_name(obj) == "Tensor" || type_name(obj) == "Parameter";
    auto holder = std::make_shared<py::object>(std::move(cap));  // its destructor releases the tensor
    t.keep = std::shared_ptr<void>(holder, holder.get());
    return t;
}

}  // namespace

std::int64_t tensor_arg::numel() const {
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
}

std::string tensor_arg::shape_str() const {
    std::ostringstream o;
    o << '[';
    for (std::size_t i = 0; i < shape.size(); ++i) o << (i ? ", " : "") << shape[i];
    o << ']';
    return o.str();
}

std::string tensor_arg::describe() const { return name + " (" + dtype_name + ", shape " + shape_str() + ")"; }

bool tensor_arg::unit_last_stride() const { return shape.empty() || shape.back() <= 1 || strides.back() == 1; }

bool tensor_arg::c_contiguous() const {
    std::int64_t expect = 1;
    for (std::size_t k = shape.size(); k-- > 0;) {
        if (shape[k] > 1 && strides[k] != expect) return false;
        expect *= shape[k];
    }
    return true;
}

tensor_arg read_tensor(py::handle obj, const char* name) {
    if (obj.is_none()) throw py::type_error(std::string(name) + ": expected a tensor or array, got None");
    // numpy arrays take the buffer protocol (it also carries bool, which
    // numpy's __dlpack__ refuses); torch tensors and other DLPack producers
    // the capsule.
    if (PyObject_CheckBuffer(obj.ptr())) return from_buffer(obj, name);
    if (py::hasattr(obj, "__dlpack__")) return from_dlpack_object(obj, name);
    throw py::type_error(std::string(name) + ": expected a tensor or array (an object with __dlpack__ or the buffer "
                         "protocol: torch.Tensor, numpy.ndarray, ...), got " + type_name(obj));
}

std::optional<tensor_arg> read_optional(py::handle obj, const char* name) {
    if (obj.is_none()) return std::nullopt;
    return read_tensor(obj, name);
}

bool is_logprob_dtype(dtype_code c) {
    return c == dtype_code::f32 || c == dtype_code::f64 || c == dtype_code::f16 || c == dtype_code::bf16 ||
           c == dtype_code::u16;
}
bool is_mask_dtype(dtype_code c) {
    return c == dtype_code::boolean || c == dtype_code::u8 || c == dtype_code::i8 || c == dtype_code::i16 ||
           c == dtype_code::i32 || c == dtype_code::i64 || c == dtype_code::f32 || c == dtype_code::f64;
}
const char* logprob_dtypes_text() {
    return "float32, float64, float16, bfloat16 (or uint16 holding bfloat16 bits)";
}
const char* mask_dtypes_text() { return "bool, uint8, int8, int16, int32, int64, float32 or float64"; }

unsigned check_threads(long threads) {
    if (threads < 1) throw py::value_error("threads must be >= 1, got " + std::to_string(threads));
    if (threads > 1024) throw py::value_error("threads must be <= 1024, got " + std::to_string(threads));
    return unsigned(threads);
}

}  // namespace logratio_py
