// kcache-verify: runs the known-answer test of one stored binary, or only
// loads it, in its own process so that the caller can hold a deadline over it
// (a checksum-valid but wrong or damaged binary may loop forever or make the
// driver abort the process that loads it).
//
//   kcache-verify --variant ID --options OPTS --device NAME --platform NAME --driver VERSION
//   kcache-verify --check load --options OPTS --device NAME --platform NAME --driver VERSION
//   kcache-verify --kat FILE --options OPTS --device NAME --platform NAME --driver VERSION
//   kcache-verify --canary "ID;ID;…" --seed N --device NAME --platform NAME --driver VERSION
//                 [--previous stdin]   (earlier drivers' binaries on stdin, verify_canary.hpp)
//
// The binary comes on stdin. The verdict goes to stdout as two lines: the
// state ("passed", "failed" or "no_kat"; "loaded" or "failed" for --check
// load: the program was built from the binary and its kernels created), then
// the detail. The canary mode builds the variants from source and replies
// one line per variant (verify_canary.hpp).
// Exit codes: 0 passed or loaded, 1 failed or no_kat, 2 the device is not
// present, 64 usage, 70 parent already gone.

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kcache/cl/kat.hpp"
#include "kcache/cl/program.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/device_db/identity.hpp"
#include "verify_canary.hpp"
#include "verify_kat.hpp"

namespace {

using namespace kcache;

// A KAT file lists a few thousand values; anything far larger is not one.
constexpr std::size_t kMaxKatFileBytes = 16u << 20;

constexpr const char* kUsage =
    "usage: kcache-verify --variant ID --options OPTS --device NAME --platform NAME "
    "--driver VERSION < BINARY\n"
    "       kcache-verify --check load --options OPTS --device NAME --platform NAME "
    "--driver VERSION < BINARY\n"
    "       kcache-verify --kat FILE --options OPTS --device NAME --platform NAME "
    "--driver VERSION < BINARY\n"
    "       kcache-verify --canary \"ID;ID\" --seed N --device NAME --platform NAME "
    "--driver VERSION [--previous stdin < FRAMES]\n";

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

// Creates every kernel of `program`: a driver reads the kernels' code only
// then, so a load check that stopped at the build would miss damage there.
std::string create_kernels(cl_program program) {
    cl_uint count = 0;
    cl_int err = clCreateKernelsInProgram(program, 0, nullptr, &count);
    if (err != CL_SUCCESS) {
        return cl::failure("clCreateKernelsInProgram", err);
    }
    std::vector<cl_kernel> kernels(count);
    err = clCreateKernelsInProgram(program, count, kernels.data(), nullptr);
    for (cl_uint i = 0; err == CL_SUCCESS && i < count; ++i) {
        clReleaseKernel(kernels[i]);
    }
    return err == CL_SUCCESS ? std::string() : cl::failure("clCreateKernelsInProgram", err);
}

// The variant ids of the canary's ";"-separated list.
std::vector<std::string> split_ids(const std::string& list) {
    std::vector<std::string> ids;
    for (std::size_t at = 0; at <= list.size();) {
        const std::size_t end = std::min(list.find(';', at), list.size());
        if (end > at) {
            ids.push_back(list.substr(at, end - at));
        }
        at = end + 1;
    }
    return ids;
}

// The canary on `d` (verify_canary.hpp), with earlier drivers' binaries
// from stdin under --previous stdin.
int canary(std::map<std::string, std::string>& args, const device_db::OpenClDevice& d) {
    const auto ids = split_ids(args["--canary"]);
    std::vector<std::optional<cl::PreviousBinary>> previous;
    if (args.count("--previous")) {
        if (args["--previous"] != "stdin") {
            std::cerr << "kcache-verify: --previous takes \"stdin\"\n" << kUsage;
            return 64;
        }
        const std::string in((std::istreambuf_iterator<char>(std::cin)),
                             std::istreambuf_iterator<char>());
        auto frames = cl::parse_previous_frames(in, ids.size());
        if (!frames) {
            std::cerr << "kcache-verify: --previous stdin: " << frames.error() << "\n";
            return 64;
        }
        previous = std::move(*frames);
    }
    return cl::run_canary_variants(
        d.platform, d.device, ids, d.identity.extensions,
        static_cast<std::uint32_t>(std::strtoul(args["--seed"].c_str(), nullptr, 10)), previous);
}

// The caller's KAT of --kat FILE on the binary from stdin (verify_kat.hpp).
int caller_kat(std::map<std::string, std::string>& args, const device_db::OpenClDevice& d) {
    auto text = read_regular_file(args["--kat"], kMaxKatFileBytes);
    if (!text) {
        std::cerr << "kcache-verify: " << text.error().message << "\n";
        return 64;
    }
    const std::string in((std::istreambuf_iterator<char>(std::cin)),
                         std::istreambuf_iterator<char>());
    auto r =
        cl::run_caller_kat(d.platform, d.device, *text, {in.begin(), in.end()}, args["--options"]);
    if (!r) {
        std::cerr << "kcache-verify: " << args["--kat"] << ": " << r.error() << "\n";
        return 64;
    }
    return verdict(r->passed ? cl::KatState::passed : cl::KatState::failed, r->detail);
}

// Runs the test of `variant` (none: only loads the binary) on the device
// named by `args`; see the usage above.
int verify(std::map<std::string, std::string>& args,
           const std::optional<kernels::Variant>& variant) {
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
        if (args.count("--canary")) {
            return canary(args, d);
        }
        if (args.count("--kat")) {
            return caller_kat(args, d);
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
                           "the driver rejected the stored binary: " + program.error().message);
        }
        if (!variant) {
            const std::string problem = create_kernels(program->get());
            if (!problem.empty()) {
                return verdict(cl::KatState::failed,
                               "the driver rejected the stored binary: " + problem);
            }
            std::cout << "loaded\n\n" << std::flush;
            return 0;
        }
        const cl::KatResult r = cl::run_kat(context.get(), d.device, program->get(), *variant);
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
    const bool load_only = args.count("--check") && args["--check"] == "load";
    const bool canary = args.count("--canary") != 0;
    const bool caller = args.count("--kat") != 0;
    for (const char* name :
         {canary      ? "--canary"
          : load_only ? "--check"
          : caller    ? "--kat"
                      : "--variant",
          canary ? "--seed" : "--options", "--device", "--platform", "--driver"}) {
        const int expected = canary && args.count("--previous") ? 13 : 11;
        if (!args.count(name) || argc != expected) {
            std::cerr << kUsage;
            return 64;
        }
    }
    std::optional<kernels::Variant> variant;
    if (!load_only && !canary && !caller) {
        auto parsed = kernels::parse_variant(args["--variant"]);
        if (!parsed) {
            return verdict(cl::KatState::no_kat, parsed.error().message);
        }
        variant = *parsed;
    }
    try {
        return verify(args, variant);
    } catch (const std::exception& e) {  // only std::bad_alloc is expected
        std::cerr << "kcache-verify: " << e.what() << "\n";
        return 1;
    }
}
