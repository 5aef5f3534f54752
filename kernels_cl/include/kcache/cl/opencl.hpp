#pragma once
// The OpenCL headers as kcache's installed headers include them: version 3.0
// API unless the includer chose another before.

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
