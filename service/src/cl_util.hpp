#pragma once
// The service's owner of a program reference and the key of its maps by
// handle (the calls into OpenCL themselves are the loader's: loader.hpp).

#include <string>
#include <string_view>
#include <utility>

#include "kcache/cl/handles.hpp"

namespace kcache::service {

// Owns one reference to a cl_program.
using ProgramRef = cl::ProgramHandle;

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
