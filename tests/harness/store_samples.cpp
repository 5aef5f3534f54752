#include "store_samples.hpp"

#include <string>

#include "kcache/common/sha256.hpp"

namespace kcache::test {

store::KeyFields sample_fields(int i) {
    store::KeyFields f;
    f.kernel_name = "conv2d_f32";
    f.source_digest = kcache::sha256_hex("__kernel void k" + std::to_string(i) + "() {}");
    f.entry_points = {"conv2d_f32", "conv2d_f32_tail"};
    f.build_options = "-cl-fast-relaxed-math  -DTILE=16";
    f.target_format = "native";
    f.vendor_id = 0x8086;
    f.device_name = "Intel(R) Arc(TM) Graphics";
    f.pci_device_id = 0x7d55;
    f.ip_version = 0x03118000;
    f.driver_version = "23.35.27191.9";
    f.platform_name = "Intel(R) OpenCL Graphics";
    f.platform_version = "OpenCL 3.0";
    f.opencl_c_version = "OpenCL C 1.2";
    f.address_bits = 64;
    f.device_uuid = "8680557d080000000002000000000000";
    f.driver_uuid = "32332e33352e32373139312e39000000";
    f.compiler_id = "driver 23.35.27191.9";
    return f;
}

store::Provenance test_provenance() {
    store::Provenance p;
    p.producer_version = "kcache-test 0.1";
    p.origin = store::Origin::jit;
    p.build_time_ms = 1234;
    p.build_log = "build ok";
    return p;
}

}  // namespace kcache::test
