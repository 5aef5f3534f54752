#pragma once
// The frame of every test-only OpenCL loader layer (OPENCL_LAYERS, ocl-icd
// ≥ 2.3): test_layer.cpp, built into each layer, exports the two entry
// points the loader looks a layer up by (clGetLayerInfo: API version 1.0;
// clInitLayer: keeps the loader's table of the next calls and hands out the
// layer's own, the same with the calls the layer takes replaced).

#include <CL/cl_layer.h>

namespace kcache::test {

// The next calls (the loader's table), filled at clInitLayer.
extern cl_icd_dispatch g_next;

// Defined by each layer: replaces in `layer` (a copy of g_next) the calls
// the layer takes.
void take_calls(cl_icd_dispatch& layer);

}  // namespace kcache::test
