// The installed typed launchers (kcache/cl/launch.hpp) for Python: handles in
// as ints, the event of the last launch out as an int owning one reference
// (or the OpenCL error). kcache/ops.py wraps them for pyopencl arrays.

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "kcache/cl/launch.hpp"
#include "kcache/kernels/registry.hpp"

namespace py = pybind11;

namespace kcache::python {
namespace {

template <class T>
T handle_of(HandleInt h) {
    return reinterpret_cast<T>(h);
}

// What Python passes for every launch: queue, program, local size, waits.
struct Target {
    HandleInt queue, program;
    std::size_t local_size;
    std::vector<HandleInt> wait;
};

// Returns (event address owning one reference, 0, "") or (0, code, message).
template <class F>
py::tuple launched(const Target& t, F&& launch) {
    std::vector<cl_event> wait;
    for (HandleInt e : t.wait) {
        wait.push_back(handle_of<cl_event>(e));
    }
    const cl::LaunchTarget target{handle_of<cl_command_queue>(t.queue),
                                  handle_of<cl_program>(t.program), t.local_size, wait};
    cl::Launched r = [&] {
        py::gil_scoped_release unlocked;
        return launch(target);
    }();
    if (!r) {
        return py::make_tuple(0, r.error().code, r.error().message);
    }
    return py::make_tuple(reinterpret_cast<HandleInt>(r->release()), 0, "");
}

// Returns (canonical kernel name, local size, dtype) of a registry variant;
// ValueError for a variant the registry does not make.
py::tuple variant_info(const std::string& kernel, const std::map<std::string, std::string>& p) {
    kernels::Params params(p.begin(), p.end());
    auto variant = kernels::make_variant(kernel, params);
    if (!variant) {
        throw py::value_error(variant.error().message);
    }
    auto size = cl::variant_local_size(*variant);
    if (!size) {
        throw py::value_error(size.error().message);
    }
    return py::make_tuple(variant->kernel, *size, std::string(variant->get("dtype")));
}

kernels::Conv2dShape conv2d_shape(const std::vector<std::int32_t>& v) {
    if (v.size() != 14) {
        throw py::value_error("conv2d shape needs 14 values");
    }
    return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]};
}

}  // namespace

void bind_ops(py::module_& m) {
    py::class_<Target>(m, "LaunchTarget")
        .def(py::init<HandleInt, HandleInt, std::size_t, std::vector<HandleInt>>(),
             py::arg("queue"), py::arg("program"), py::arg("local_size"), py::arg("wait"));
    m.def("variant_info", &variant_info, py::arg("kernel"), py::arg("params"),
          "(canonical name, local size, dtype) of a registry variant (ValueError for a bad "
          "one).");
    m.def("dot_partial_bytes", &cl::dot_partial_bytes, py::arg("n"), py::arg("rows"),
          py::arg("local_size"));
    m.def("launch_dot", [](const Target& t, std::size_t n, std::size_t rows, HandleInt x,
                           HandleInt y, HandleInt partial, HandleInt out) {
        const cl::DotBuffers b{handle_of<cl_mem>(x), handle_of<cl_mem>(y),
                               handle_of<cl_mem>(partial), handle_of<cl_mem>(out)};
        return launched(t,
                        [&](const cl::LaunchTarget& lt) { return cl::launch_dot(lt, n, rows, b); });
    });
    m.def("launch_conv2d", [](const Target& t, const std::vector<std::int32_t>& shape, HandleInt x,
                              HandleInt w, HandleInt bias, HandleInt y) {
        const auto s = conv2d_shape(shape);
        const cl::Conv2dBuffers b{handle_of<cl_mem>(x), handle_of<cl_mem>(w),
                                  handle_of<cl_mem>(bias), handle_of<cl_mem>(y)};
        return launched(t, [&](const cl::LaunchTarget& lt) { return cl::launch_conv2d(lt, s, b); });
    });
    m.def("launch_batchnorm", [](const Target& t, std::int32_t n, std::int32_t c, std::int32_t hw,
                                 std::vector<HandleInt> bufs, float eps, bool training) {
        if (bufs.size() != 6) {
            throw py::value_error("batchnorm needs x, mean, var, gamma, beta and y");
        }
        const kernels::BatchnormShape s{n, c, hw};
        const cl::BatchnormBuffers b{handle_of<cl_mem>(bufs[0]),
                                     handle_of<cl_mem>(bufs[1]),
                                     handle_of<cl_mem>(bufs[2]),
                                     handle_of<cl_mem>(bufs[3]),
                                     handle_of<cl_mem>(bufs[4]),
                                     handle_of<cl_mem>(bufs[5]),
                                     eps};
        return launched(t, [&](const cl::LaunchTarget& lt) {
            return training ? cl::launch_batchnorm_training(lt, s, b)
                            : cl::launch_batchnorm_inference(lt, s, b);
        });
    });
}

}  // namespace kcache::python
