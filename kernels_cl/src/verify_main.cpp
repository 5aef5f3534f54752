// kcache-verify: runs the known-answer test of one stored binary, in its own
// process so that `kcache verify --run` can hold a deadline over it (a
// checksum-valid but wrong binary may loop forever or crash the driver).
//
//   kcache-verify --variant ID --options OPTS --device NAME --platform NAME --driver VERSION
//
// The binary comes on stdin. The verdict goes to stdout as two lines: the
// state ("passed", "failed" or "no_kat"), then the detail.
// Exit codes: 0 passed, 1 failed or no_kat, 2 the device is not present,
// 64 usage, 70 parent already gone.

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "kcache/cl/kat.hpp"
#include "kcache/cl/program.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/device_db/identity.hpp"

namespace {

using namespace kcache;

constexpr const char* kUsage =
    "usage: kcache-verify --variant ID --options OPTS --device NAME --platform NAME "
    "--driver VERSION < BINARY\n";

// The child half of the watchdog's contract: die with the parent, and give up
// at once if the parent already died before prctl ran.
void die_with_parent() {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const char* expected = std::getenv(compiler::kParentPidEnv);
    if (expected && std::strtol(expected, nullptr, 10) != static_cast<long>(::getppid())) {
        ::_exit(70);
    }
}

int verdict(cl::KatState state, const std::string& detail) {
    std::cout << cl::to_string(state) << "\n" << detail << "\n" << std::flush;
    return state == cl::KatState::passed ? 0 : 1;
}

// Runs the test of `variant` on the device named by `args`; see the usage above.
int verify(std::map<std::string, std::string>& args, const kernels::Variant& variant) {
    auto listed = device_db::list_opencl_devices();
    if (!listed) {
        std::cerr << "kcache-verify: " << listed.error().message << "\n";
        return 2;
    }
    for (const device_db::OpenClDevice& d : listed->devices) {
        if (d.identity.name != args["--device"] || d.identity.platform_name != args["--platform"] ||
            d.identity.driver_version != args["--driver"]) {
            continue;
        }
        const cl_context_properties props[] = {
            CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(d.platform), 0};
        cl_int err = CL_SUCCESS;
        cl::ContextHandle context(clCreateContext(props, 1, &d.device, nullptr, nullptr, &err));
        if (err != CL_SUCCESS) {
            return verdict(cl::KatState::failed, cl::failure("clCreateContext", err));
        }
        const std::string in((std::istreambuf_iterator<char>(std::cin)),
                             std::istreambuf_iterator<char>());
        const std::vector<std::uint8_t> bytes(in.begin(), in.end());
        auto program = cl::program_from_binary(context.get(), d.device, bytes, args["--options"]);
        if (!program) {
            return verdict(cl::KatState::failed,
                           "the driver rejected the stored binary: " + program.error());
        }
        const cl::KatResult r = cl::run_kat(context.get(), d.device, program->get(), variant);
        return verdict(r.state, r.detail);
    }
    std::cerr << "kcache-verify: device " << args["--device"] << " is not present\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    die_with_parent();
    std::map<std::string, std::string> args;
    for (int i = 1; i + 1 < argc; i += 2) {
        args[argv[i]] = argv[i + 1];
    }
    for (const char* name : {"--variant", "--options", "--device", "--platform", "--driver"}) {
        if (!args.count(name) || argc != 11) {
            std::cerr << kUsage;
            return 64;
        }
    }
    auto variant = kernels::parse_variant(args["--variant"]);
    if (!variant) {
        return verdict(cl::KatState::no_kat, variant.error().message);
    }
    try {
        return verify(args, *variant);
    } catch (const std::exception& e) {  // only std::bad_alloc is expected
        std::cerr << "kcache-verify: " << e.what() << "\n";
        return 1;
    }
}
