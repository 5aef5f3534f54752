#include "driver_copy.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "child_process.hpp"
#include "kcache/device_db/compiler_files.hpp"
#include "kcache/device_db/identity.hpp"
#include "test_platform.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;

// Sets OCL_ICD_VENDORS for the children spawned in its lifetime.
class IcdVendors {
  public:
    explicit IcdVendors(const fs::path& dir) {
        if (const char* v = std::getenv("OCL_ICD_VENDORS")) {
            kept_ = v;
        }
        if (!dir.empty()) {
            ::setenv("OCL_ICD_VENDORS", dir.c_str(), 1);
        }
    }
    ~IcdVendors() {
        if (kept_) {
            ::setenv("OCL_ICD_VENDORS", kept_->c_str(), 1);
        } else {
            ::unsetenv("OCL_ICD_VENDORS");
        }
    }
    IcdVendors(const IcdVendors&) = delete;
    IcdVendors& operator=(const IcdVendors&) = delete;

  private:
    std::optional<std::string> kept_;
};

void link_to(const fs::path& target, const fs::path& link) {
    fs::create_directories(link.parent_path());
    fs::create_symlink(fs::canonical(target), link);
}

}  // namespace

DriverCopy copy_driver(const fs::path& original, const fs::path& root) {
    const fs::path libdir = root / "lib" / original.parent_path().filename();
    fs::create_directories(libdir);
    DriverCopy out{libdir / original.filename(), root / "icd"};
    fs::copy_file(original, out.library);
    fs::last_write_time(out.library, fs::last_write_time(original));
    // Each directory of the data files the rule lists, where the copy's is
    // another: every entry linked to the original's (PoCL's data).
    const auto from = device_db::driver_data_files(original.string());
    const auto to = device_db::driver_data_files(out.library.string());
    std::map<fs::path, fs::path> dirs;
    for (std::size_t i = 0; i < from.size() && i < to.size(); ++i) {
        if (from[i] != to[i] && fs::exists(from[i])) {
            dirs[fs::path(from[i]).parent_path()] =
                fs::path(to[i]).lexically_normal().parent_path();
        }
    }
    for (const auto& [original_dir, copy_dir] : dirs) {
        for (const auto& entry : fs::directory_iterator(original_dir)) {
            if (entry.is_regular_file()) {
                link_to(entry.path(), copy_dir / entry.path().filename());
            }
        }
    }
    // PoCL's device modules, which it opens from <libdir>/pocl.
    if (fs::is_directory(original.parent_path() / "pocl")) {
        link_to(original.parent_path() / "pocl", libdir / "pocl");
    }
    fs::create_directories(out.icd_dir);
    std::ofstream(out.icd_dir / "copy.icd") << out.library.string() << "\n";
    return out;
}

void make_real(const fs::path& path) {
    const fs::path target = fs::canonical(path);
    fs::remove(path);
    fs::copy_file(target, path);
    fs::last_write_time(path, fs::last_write_time(target));
}

void shift_mtime(const fs::path& path, int seconds) {
    fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds(seconds));
}

bool serve_probe_role() {
    if (child_role() != "probe") {
        return false;
    }
    wait_for_start_gate();
    auto id = device_db::probe(find_test_device());
    if (!id) {
        report_line("error " + id.error().message);
        return true;
    }
    report_line("files " + id->compiler_files);
    report_line("compiler " + device_db::jit_compiler_id(*id));
    return true;
}

std::vector<std::string> run_child(const std::string& role, const fs::path& icd_dir,
                                   const std::map<std::string, std::string>& env) {
    std::vector<ChildResult> results;
    {
        IcdVendors vendors(icd_dir);
        auto group = ChildGroup::spawn(1, role, env);
        group.release();
        results = group.wait_all(std::chrono::seconds(180));
    }
    EXPECT_EQ(results.size(), 1u);
    if (results.empty()) {
        return {};
    }
    EXPECT_TRUE(results[0].ok()) << role << ": " << results[0].describe();
    return results[0].lines;
}

ProbeReport probe_in_child(const fs::path& icd_dir) {
    ProbeReport out;
    for (const std::string& line : run_child("probe", icd_dir)) {
        if (line.rfind("files ", 0) == 0) {
            out.compiler_files = line.substr(6);
        } else if (line.rfind("compiler ", 0) == 0) {
            out.compiler_id = line.substr(9);
        } else {
            out.why += line;
        }
    }
    EXPECT_TRUE(out.why.empty()) << out.why;
    EXPECT_FALSE(out.compiler_files.empty()) << "no compiler files named with " << icd_dir;
    return out;
}

}  // namespace kcache::test
