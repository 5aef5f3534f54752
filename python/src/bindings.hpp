#pragma once
// The pieces of the `kcache._kcache` extension module. It binds only the
// public C++ API (kcache/kcache.hpp); the pure-Python layer (kcache/*.py)
// turns pyopencl objects into handles and outcomes into exceptions.

#include <pybind11/pybind11.h>

#include <chrono>
#include <cstdint>
#include <optional>

#include "kcache/kcache.hpp"

namespace kcache::python {

// A cl_context or cl_device_id as Python passes it: the handle's address.
using HandleInt = std::uintptr_t;

// Returns `ms` as a deadline, or none (the configured default) when absent.
std::optional<std::chrono::milliseconds> deadline_of(std::optional<std::int64_t> ms);

// Returns the Mode named `name` ("blocking", "fail_fast", "background");
// throws ValueError naming the choices otherwise.
Mode mode_of(const std::string& name);

// Moves `p` into a new Python ProgramHandle that owns its reference.
pybind11::object make_handle(Program p);

// Registers Outcome and ProgramHandle on `m`.
void bind_outcome(pybind11::module_& m);
// Registers the typed launchers (launch_dot, ...) and variant_info on `m`.
void bind_ops(pybind11::module_& m);
// Registers CacheCore (the opened cache) and open_cache() on `m`.
void bind_cache(pybind11::module_& m);

}  // namespace kcache::python
