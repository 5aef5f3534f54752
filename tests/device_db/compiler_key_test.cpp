// The files of the driver's compiler in what kcache keys a binary and a
// canary verdict by: with the test platform's library copied and offered to
// the ICD loader alone, a binary stored before the copy was touched is not
// served after it (the request goes to the JIT rung), nor does the canary's
// record of the old files vouch for the new; with the old mtime back, both
// are found again.
#define KCACHE_TEST_INTERNAL_API
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "child_process.hpp"
#include "driver_copy.hpp"
#include "jit_support.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/device_db/compiler_files.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/observe/names.hpp"
#include "kcache/service/keys.hpp"
#include "kcache/service/parts.hpp"
#include "kcache/service/service_api.hpp"
#include "temp_dir.hpp"
#include "test_platform.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;

TEST(CompilerKey, TheJitKeyAndTheCanaryNameTheCompilerFiles) {
    auto id = device_db::probe(find_test_device());
    ASSERT_TRUE(id.ok()) << id.error().message;
    ASSERT_EQ(id->compiler_files.size(), 16u);
    const std::string compiler = device_db::jit_compiler_id(*id);
    EXPECT_TRUE(compiler.ends_with(":" + id->compiler_files)) << compiler;
    EXPECT_EQ(device_db::jit_key_fields(*id, {}).compiler_id, compiler);
    EXPECT_EQ(canary::driver_identity(*id).compiler, compiler);
}

class CompilerKeyOfACopy : public TempDirTest {
  protected:
    static void SetUpTestSuite() { use_private_pocl_cache(); }

    // Serves this test's child roles; true in a child.
    static bool serve_roles() {
        const std::string role = child_role();
        if (role.empty()) {
            return false;
        }
        wait_for_start_gate();
        const fs::path store = child_env("STORE");
        auto id = device_db::probe(find_test_device());
        if (!id) {
            report_line("error " + id.error().message);
        } else if (role == "request") {
            report_line(request_dot(store));
        } else if (role == "record") {
            canary::Record record;
            record.identity = canary::driver_identity(*id);
            auto saved = canary::save_record(canary::canary_dir(store), record);
            report_line(saved ? "saved" : "error " + saved.error());
        } else if (role == "previous") {
            report_line(previous_of_dot(store, *id));
        } else if (role == "lookup") {
            const auto found =
                canary::load_record(canary::canary_dir(store), canary::driver_identity(*id));
            report_line(found ? "found" : "none");
        }
        return true;
    }

    // The rung that answered a request for `dot`, or what went wrong.
    static std::string request_dot(const fs::path& store) {
        Config c;
        c.dir = store;
        c.jit_helper = jit_helper_path();
        c.jit_timeout = std::chrono::milliseconds(120'000);
        c.canary = CanaryPolicy::off;
        Outcome o;
        auto cache = Cache::open(c, &o);
        if (!cache) {
            return "error " + o.message;
        }
        cl_device_id device = find_test_device();
        cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, nullptr);
        std::string answer;
        {
            Program p =
                cache->program(context, device, KernelRequest{"dot", {}, {}, Mode::blocking});
            answer = p.outcome().status == StatusCode::ok ? to_string(p.outcome().rung)
                                                          : "error " + p.outcome().message;
        }
        cache.reset();
        clReleaseContext(context);
        return answer;
    }

    // What the differential check would compare dot's stored variant with
    // on the device `id`: "previous <name> <bytes>", or "none".
    static std::string previous_of_dot(const fs::path& store_dir,
                                       const device_db::DeviceIdentity& id) {
        Config c;
        c.dir = store_dir;
        auto store = service::open_user_store(c, service::StoreAccess::read_only,
                                              service::OpenTiming::at_once);
        if (!store) {
            return "error " + store.error().message;
        }
        auto entries = store->list();
        if (!entries) {
            return "error " + entries.error().message;
        }
        std::vector<kernels::Variant> dot;
        for (const store::EntryInfo& e : *entries) {
            auto v = kernels::parse_variant(e.fields.kernel_name);
            if (v && v->kernel == "dot") {
                dot.push_back(std::move(*v));
            }
        }
        const auto found =
            canary::previous_binaries(*store, id, dot, canary::canary_dir(store_dir));
        if (dot.size() != 1 || found.size() != 1) {
            return "none";
        }
        const canary::PreviousBinary& p = found.begin()->second;
        return "previous " + p.driver + " " + std::to_string(p.bytes.size());
    }

    // What the child of `role` reported, with the copy offered alone.
    std::string in_child(const std::string& role) {
        const auto lines = run_child(role, copy_.icd_dir, {{"STORE", (dir() / "store").string()}});
        return lines.size() == 1 ? lines[0] : "no single line from " + role;
    }

    DriverCopy copy_;
};

TEST_F(CompilerKeyOfACopy, ATouchedLibraryIsANewCompilerForTheStoreAndTheCanary) {
    if (serve_roles()) {
        return;
    }
    copy_ = copy_driver(device_db::icd_library_path(find_test_platform()), dir() / "driver");
    ASSERT_EQ(in_child("request"), "jit");
    ASSERT_EQ(in_child("request"), "user_store");
    ASSERT_EQ(in_child("record"), "saved");
    ASSERT_EQ(in_child("lookup"), "found");

    shift_mtime(copy_.library, -3600);  // another build of the driver, same version
    EXPECT_EQ(in_child("lookup"), "none");
    EXPECT_EQ(in_child("request"), "jit");
    EXPECT_EQ(canary::load_records(canary::canary_dir(dir() / "store")).size(), 1u);

    shift_mtime(copy_.library, 3600);  // nothing changed after all: both found again
    EXPECT_EQ(in_child("lookup"), "found");
    EXPECT_EQ(in_child("request"), "user_store");
}

// An update of the compiler's files alone (the driver version unchanged, as
// with a libclc update under rusticl) is an earlier build to the canary's
// differential check: the binary the old files built is the one compared.
TEST_F(CompilerKeyOfACopy, TheBinaryOfTheOldCompilerFilesIsTheEarlierBuild) {
    if (serve_probe_role() || serve_roles()) {
        return;
    }
    copy_ = copy_driver(device_db::icd_library_path(find_test_platform()), dir() / "driver");
    const ProbeReport before = probe_in_child(copy_.icd_dir);
    ASSERT_EQ(before.compiler_files.size(), 16u) << before.why;
    ASSERT_EQ(in_child("request"), "jit");
    EXPECT_EQ(in_child("previous"), "none");  // its own identity's binary is no earlier one

    shift_mtime(copy_.library, -3600);  // the same driver version, other compiler files
    const std::string previous = in_child("previous");
    auto id = device_db::probe(find_test_device());
    ASSERT_TRUE(id.ok()) << id.error().message;
    const std::string expected =
        "previous " + id->driver_version + ", compiler files " + before.compiler_files + " ";
    EXPECT_TRUE(previous.starts_with(expected)) << previous << " (expected " << expected << "…)";
    EXPECT_GT(std::atol(previous.substr(expected.size()).c_str()), 0) << previous;
}

}  // namespace
}  // namespace kcache::test
