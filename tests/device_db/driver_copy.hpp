#pragma once
// A real OpenCL driver installed a second time: the test platform's vendor
// library copied under a directory of the test's, with an .icd file naming
// the copy, and children of the test binary that probe the test device with
// the ICD loader offered the copy alone (OCL_ICD_VENDORS).

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kcache::test {

struct DriverCopy {
    std::filesystem::path library;  // the copy
    std::filesystem::path icd_dir;  // holds only an .icd file naming `library`
};

// Copies `original` (a loaded vendor library, named as the dynamic loader
// names it) to <root>/lib/<its directory's name>/, keeping its mtime, and
// links back to the originals what the driver looks for beside it: the
// files driver_data_files() lists for the copy where they differ from the
// original's (PoCL's data), and a directory named after the driver
// (PoCL's device modules, <libdir>/pocl).
DriverCopy copy_driver(const std::filesystem::path& original, const std::filesystem::path& root);

// Replaces the link `path` with a copy of the file it names, mtime kept.
void make_real(const std::filesystem::path& path);

// Sets the mtime of `path` to its current one plus `seconds`.
void shift_mtime(const std::filesystem::path& path, int seconds);

// What one child that probed the test device reported (each value "" when
// the child failed; `why` then says how).
struct ProbeReport {
    std::string compiler_files;  // DeviceIdentity::compiler_files
    std::string compiler_id;     // jit_compiler_id()
    std::string why;
};

// In a child of role "probe": probes the test device and reports it.
// Returns true when this process is such a child (the test body then returns).
bool serve_probe_role();

// Runs the current test in a child of role "probe", with the ICD loader
// offered the libraries of `icd_dir` alone ("" for this process's own
// environment), and returns what it reported.
ProbeReport probe_in_child(const std::filesystem::path& icd_dir = {});

// Runs the current test in one child of role `role`, with OCL_ICD_VENDORS
// set to `icd_dir` and `env` as its extra environment (child_env()); returns
// the lines it reported, and fails the test when the child failed.
std::vector<std::string> run_child(const std::string& role, const std::filesystem::path& icd_dir,
                                   const std::map<std::string, std::string>& env = {});

}  // namespace kcache::test
