/* The one place that picks the OpenCL API version kcache is written against
 * (3.0: clSetContextDestructorCallback, CL_DEVICE_* 3.0 queries) before
 * including the Khronos headers. Every kcache file that needs OpenCL includes
 * this header instead of <CL/cl.h>; installed as <kcache/opencl.h>. */
#ifndef KCACHE_OPENCL_H
#define KCACHE_OPENCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#endif
