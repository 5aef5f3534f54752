#pragma once
// The typed launchers, one per registry kernel (what they share is in
// kcache/cl/launch_target.hpp). Each kernel's launcher is declared in its own
// header, kcache/cl/<file>.hpp after its kernels/cl/<file>.cl; this one
// declares the local size of a variant and includes the launchers of conv2d,
// qconv_pointwise, dot and batchnorm, which it declared itself before they had
// their own headers (a later kernel's callers include its header).

#include <cstddef>

#include "kcache/cl/batchnorm.hpp"
#include "kcache/cl/conv2d.hpp"
#include "kcache/cl/dot.hpp"
#include "kcache/cl/handles.hpp"
#include "kcache/cl/launch_target.hpp"
#include "kcache/cl/qconv.hpp"
#include "kcache/common/result.hpp"
#include "kcache/kernels/launch.hpp"
#include "kcache/kernels/registry.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::cl {

// Returns the work-group size `variant` is built with (its kernels require
// exactly that local size); the registry's error for a variant it did not make.
Result<std::size_t, kernels::KernelError> variant_local_size(const kernels::Variant& variant);

}  // namespace kcache::cl

#pragma GCC visibility pop
