// kcache._kcache: the extension module under the `kcache` Python package.

#include "bindings.hpp"

PYBIND11_MODULE(_kcache, m) {
    m.doc() =
        "Bindings of the kcache C++ API (kcache/kcache.hpp). Import `kcache`, not this module: "
        "it adds pyopencl objects, exceptions and defaults.";
    kcache::python::bind_outcome(m);
    kcache::python::bind_cache(m);
    kcache::python::bind_ops(m);
}
