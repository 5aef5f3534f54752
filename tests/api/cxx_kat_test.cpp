// A SourceRequest's own known-answer test through the header-only C++ layer
// (<kcache/kcache.hpp>) and libkcache.so's C API only, on PoCL: the path and
// the std::function reference reach the library through the C struct's
// fields, and the verdict comes back in the outcome.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "c_fixture.hpp"
#include "kcache/kcache.hpp"

namespace kcache::test {
namespace {

const std::filesystem::path kExample = KCACHE_KAT_EXAMPLE_DIR;

std::string text_of(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class CxxKat : public CApiTest {
  protected:
    void SetUp() override {
        CApiTest::SetUp();
        Config c;
        c.dir = dir() / "store";
        c.jit_helper = KCACHE_TEST_JIT_PATH;
        c.canary = CanaryPolicy::enforce;
        Outcome opened;
        cache_ = Cache::open(c, &opened);
        ASSERT_TRUE(cache_) << opened.message;
    }
    void TearDown() override {
        cache_.reset();
        CApiTest::TearDown();
    }

    // my_saxpy with a KAT file (dir()/`file`) whose output a reference computes;
    // `tolerance` makes each file its own test.
    SourceRequest saxpy(const std::string& file, const std::string& tolerance) const {
        std::string kat = text_of(kExample / "saxpy.kat.json");
        const auto at = kat.find("\"expected\"");
        kat = kat.substr(0, at) + "\"expected\": \"reference\"" + kat.substr(kat.find(']', at) + 1);
        kat.replace(kat.find("\"rel\": 1e-06"), 12, "\"rel\": " + tolerance);
        std::ofstream(dir() / file) << kat;
        SourceRequest r;
        r.name = "my_saxpy";
        r.source = text_of(kExample / "saxpy.cl");
        r.kat = dir() / file;
        return r;
    }

    std::unique_ptr<Cache> cache_;
};

// y = a * x + y over the KAT's arguments (a, x, y, n), `off` added to y[3].
bool saxpy_of(const std::vector<std::vector<float>>& in, std::vector<std::vector<float>>& out,
              float off) {
    for (std::size_t i = 0; i < out[2].size(); ++i) {
        out[2][i] = in[0][0] * in[1][i] + in[2][i] + (i == 3 ? off : 0.0f);
    }
    return true;
}

TEST_F(CxxKat, TheReferenceReachesTheLibraryAndItsVerdictComesBack) {
    int calls = 0;
    SourceRequest right = saxpy("right.kat.json", "1e-06");
    right.kat_reference = [&](const auto& in, auto& out) { return ++calls, saxpy_of(in, out, 0); };
    for (int i = 0; i < 2; ++i) {
        Program p = cache_->program(context_, device_, right);
        EXPECT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
        EXPECT_NE(p.get(), nullptr);
    }
    EXPECT_EQ(calls, 1);

    SourceRequest wrong = saxpy("wrong.kat.json", "2e-06");
    wrong.kat_reference = [](const auto& in, auto& out) { return saxpy_of(in, out, 0.5f); };
    const auto suspect = [this] {
        std::uint64_t n = 0;
        for (const auto& by_status : cache_->stats().requests) {
            n += by_status[static_cast<std::size_t>(StatusCode::driver_suspect)];
        }
        return n;
    };
    const std::uint64_t before = suspect();
    const Outcome o = cache_->program(context_, device_, wrong).outcome();
    EXPECT_EQ(o.status, StatusCode::driver_suspect) << o.message;
    EXPECT_EQ(suspect() - before, 1u);  // counted through the counters by index
    EXPECT_NE(o.message.find("args[2][3]"), std::string::npos) << o.message;

    SourceRequest throwing = saxpy("throwing.kat.json", "3e-06");
    throwing.kat_reference = [](const auto&, auto&) -> bool { throw std::runtime_error("no"); };
    const Outcome t = cache_->program(context_, device_, throwing).outcome();
    EXPECT_EQ(t.status, StatusCode::invalid_argument);
    EXPECT_NE(t.message.find("the KAT reference returned an error"), std::string::npos)
        << t.message;

    SourceRequest resized = saxpy("resized.kat.json", "4e-06");
    resized.kat_reference = [](const auto&, auto& out) { return out[2].resize(1), true; };
    EXPECT_EQ(cache_->program(context_, device_, resized).outcome().status,
              StatusCode::invalid_argument);
}

TEST_F(CxxKat, AReferenceWithoutAKatFileIsRefused) {
    SourceRequest r = saxpy("right.kat.json", "1e-06");
    r.kat.clear();
    r.kat_reference = [](const auto& in, auto& out) { return saxpy_of(in, out, 0); };
    const Outcome o = cache_->program(context_, device_, r).outcome();
    EXPECT_EQ(o.status, StatusCode::invalid_argument);
    EXPECT_NE(o.message.find("kat_reference needs request->kat_path"), std::string::npos)
        << o.message;
}

}  // namespace
}  // namespace kcache::test
