// The data's ocloc status is checked against the installed ocloc: a family recorded as
// supported must compile a trivial kernel for its target, one recorded as unsupported
// must be refused. Each distinct target compiles once (about 0.3 s each).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "kcache/device_db/database.hpp"
#include "temp_dir.hpp"

namespace kcache::device_db {
namespace {

namespace fs = std::filesystem;

class DeviceDbOcloc : public kcache::test::TempDirTest {
  protected:
    // Exit status of `ocloc compile` for `target`, output kept under the temp dir.
    int compile(const std::string& target) {
        const fs::path out = dir() / target;
        fs::create_directories(out);
        const std::string cmd = "cd '" + out.string() + "' && ocloc compile -q -file '" +
                                kernel().string() + "' -device '" + target + "' -out_dir '" +
                                out.string() + "' > ocloc.log 2>&1";
        const int status = std::system(cmd.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    fs::path kernel() {
        const fs::path path = dir() / "k.cl";
        if (!fs::exists(path)) {
            std::ofstream(path)
                << "__kernel void k(__global int* a) { a[get_global_id(0)] += 1; }\n";
        }
        return path;
    }
};

TEST_F(DeviceDbOcloc, EveryFamilysTargetStatusMatchesTheInstalledOcloc) {
    ASSERT_EQ(std::system("command -v ocloc > /dev/null"), 0) << "ocloc is not installed";
    auto db = DeviceDb::builtin();
    ASSERT_TRUE(db.ok()) << db.error().message;
    std::map<std::string, int> status_of_target;
    for (const auto& [name, family] : db->families()) {
        auto [it, fresh] = status_of_target.emplace(family.ocloc_target, 0);
        if (fresh) {
            it->second = compile(family.ocloc_target);
        }
        if (family.ocloc == OclocSupport::supported) {
            EXPECT_EQ(it->second, 0)
                << name << ": data says ocloc supports " << it->first << " but it failed; see "
                << (dir() / it->first) << "/ocloc.log";
        } else {
            EXPECT_NE(it->second, 0) << name << ": data says ocloc refuses " << it->first
                                     << ", but it compiled: mark it supported";
        }
    }
}

TEST_F(DeviceDbOcloc, SupportedTargetsProduceABinary) {
    ASSERT_EQ(compile("tgllp"), 0);
    bool found = false;
    for (const auto& entry : fs::directory_iterator(dir() / "tgllp")) {
        found |= entry.path().extension() == ".bin" && fs::file_size(entry.path()) > 0;
    }
    EXPECT_TRUE(found);
}

TEST_F(DeviceDbOcloc, EveryListedIgpuIsCoveredOrRecordedAsUnsupported) {
    auto db = DeviceDb::builtin();
    ASSERT_TRUE(db.ok()) << db.error().message;
    std::set<std::string> listed;
    for (const FamilyRecord* f : db->aot_families()) {
        listed.insert(f->name);
        EXPECT_FALSE(f->ocloc_target.empty()) << f->name;
        if (f->ocloc == OclocSupport::unsupported) {
            EXPECT_FALSE(f->notes.empty()) << f->name << ": say why it is unsupported";
        }
    }
    EXPECT_TRUE(listed.count("mtl-h"));  // 0x7d55, known unsupported by this ocloc
    EXPECT_EQ(db->family("mtl-h")->ocloc, OclocSupport::unsupported);
}

}  // namespace
}  // namespace kcache::device_db
