#pragma once
// The few OpenCL calls the service makes itself (checking a device belongs
// to a context, turning stored bytes into a built program) and the key of
// its maps by handle.

#include <string>
#include <string_view>
#include <utility>

#include "kcache/cl/handles.hpp"
#include "kcache/cl/program.hpp"

namespace kcache::service {

// Owns one reference to a cl_program.
using ProgramRef = cl::ProgramHandle;
// The one binary-to-program loader (kernels_cl/).
using cl::program_from_binary;

// Returns true when `device` is one of `context`'s devices; false (with
// `why`) when it is not or a query fails (e.g. an invalid handle).
bool device_in_context(cl_context context, cl_device_id device, std::string& why);

// A map key of OpenCL handles (one, or a std::pair) and a request's text;
// ordered by the handles first, so that the entries of one handle are
// neighbours. HandlesAndTextView stands for it in lookups, without copying
// the text.
template <class Handles>
struct HandlesAndText {
    Handles handles;
    std::string text;
};
template <class Handles>
struct HandlesAndTextView {
    Handles handles;
    std::string_view text;
};
struct HandlesThenText {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
        if (a.handles != b.handles) {
            return a.handles < b.handles;
        }
        return std::string_view(a.text) < std::string_view(b.text);
    }
};

}  // namespace kcache::service
