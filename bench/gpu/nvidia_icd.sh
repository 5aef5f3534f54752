# Sourced by the run_gpu.sh scripts on the GPU machine, with S set to the
# staged .gpu/: NVIDIA's ICD registered, and Debian's ICD loader (ocl-icd 2.3,
# which reads OPENCL_LAYERS) ahead of the machine's own. That loader also
# offers the machine's other ICDs (a PoCL CPU device, seen on the H100 on
# 2026-11-26), so the benches name NVIDIA's platform (KCACHE_TEST_PLATFORM)
# or load each binary on the platform that built it.
mkdir -p /etc/OpenCL/vendors
echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1
unset OCL_ICD_VENDORS
export LD_LIBRARY_PATH=$S/ocl-icd:$S/lib:$S/prefix/lib
