// The shared parsers and helpers every layer leans on: sizes and durations
// with overflow checks, saturating deadlines, OpenCL error names, text made
// safe for a terminal, and the bounded file reader.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "kcache/common/cl_error.hpp"
#include "kcache/common/deadline.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/config/quantity.hpp"
#include "kcache/config/text.hpp"
#include "kcache/service/keys.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

using service::BareUnit;
using service::parse_duration;
using service::parse_size;
using service::QuantityErrc;
using namespace std::chrono_literals;

TEST(Quantity, SizesParseWithUnitsAndRefuseOverflow) {
    EXPECT_EQ(parse_size("4096").value(), 4096u);
    EXPECT_EQ(parse_size("512K").value(), 512u << 10);
    EXPECT_EQ(parse_size("2g").value(), 2ull << 30);
    EXPECT_EQ(parse_size("4194304T").value(), 1ull << 62);
    for (const char* bad : {"16777216T", "17179869184G", "4194305T", "18446744073709551616",
                            "99999999999999999999999K"}) {
        auto r = parse_size(bad);
        ASSERT_FALSE(r.ok()) << bad << " = " << r.value();
        EXPECT_EQ(r.error().code, QuantityErrc::out_of_range) << bad;
        EXPECT_NE(r.error().message.find("out of range"), std::string::npos) << r.error().message;
    }
    for (const char* bad : {"", "K", "-1", "1.5G", "12Q", " 1", "1 K"}) {
        auto r = parse_size(bad);
        ASSERT_FALSE(r.ok()) << "'" << bad << "'";
        EXPECT_EQ(r.error().code, QuantityErrc::malformed) << "'" << bad << "'";
        EXPECT_NE(r.error().message.find("not a size"), std::string::npos) << r.error().message;
    }
}

TEST(Quantity, DurationsParseWithUnitsAndRefuseOverflow) {
    EXPECT_EQ(parse_duration("90", BareUnit::seconds).value(), 90s);
    EXPECT_EQ(parse_duration("90", BareUnit::milliseconds).value(), 90ms);
    EXPECT_EQ(parse_duration("1500ms", BareUnit::seconds).value(), 1500ms);
    EXPECT_EQ(parse_duration("7d", BareUnit::seconds).value(), std::chrono::hours(168));
    EXPECT_EQ(parse_duration("36500d", BareUnit::seconds).value(), service::kMaxDuration);
    for (const char* bad : {"9999999999999999999d", "213503982334601d", "200000d", "36501d",
                            "99999999999999999999999"}) {
        auto r = parse_duration(bad, BareUnit::seconds);
        ASSERT_FALSE(r.ok()) << bad << " = " << r.value().count();
        EXPECT_EQ(r.error().code, QuantityErrc::out_of_range) << bad;
        EXPECT_NE(r.error().message.find("out of range"), std::string::npos) << r.error().message;
    }
    for (const char* bad : {"", "s", "-5s", "2K", "1.5h", "5 m"}) {
        auto r = parse_duration(bad, BareUnit::seconds);
        ASSERT_FALSE(r.ok()) << "'" << bad << "'";
        EXPECT_EQ(r.error().code, QuantityErrc::malformed) << "'" << bad << "'";
    }
}

TEST(Deadline, SaturatesInsteadOfOverflowing) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point now = Clock::now();
    EXPECT_EQ(deadline_after<Clock>(now, 5s), now + 5s);
    EXPECT_EQ(deadline_after<Clock>(now, -5s), now);
    for (auto huge : {std::chrono::milliseconds::max(),
                      std::chrono::milliseconds(service::kMaxDuration * 10)}) {
        const auto d = deadline_after<Clock>(now, huge);
        EXPECT_GT(d, now + std::chrono::hours(24 * 365 * 100)) << "a huge budget must not wrap";
        EXPECT_GT(d + std::chrono::seconds(10), d) << "room is left for a grace period";
    }
    EXPECT_EQ(
        deadline_after<Clock>(Clock::time_point::max(), 1s),
        Clock::time_point::max() - std::chrono::duration_cast<Clock::duration>(kDeadlineHeadroom));
    EXPECT_GT(deadline_after(std::chrono::hours::max()), Clock::now());
}

TEST(ClError, NamesOpenClErrorCodes) {
    EXPECT_EQ(cl_error_name(-11), "CL_BUILD_PROGRAM_FAILURE");
    EXPECT_EQ(cl_error_name(0), "CL_SUCCESS");
    EXPECT_EQ(cl_error_name(-1), "CL_DEVICE_NOT_FOUND");
    EXPECT_EQ(cl_error_name(-72), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
    EXPECT_EQ(cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
    EXPECT_EQ(cl_error_name(-25), "CL error -25");
    EXPECT_EQ(cl_error_name(12345), "CL error 12345");
}

TEST(Printable, ControlBytesAndBadUtf8AreEscaped) {
    EXPECT_EQ(service::printable("plain text, ünïcode ✓"), "plain text, ünïcode ✓");
    EXPECT_EQ(service::printable("a\x1b[2Jb"), "a\\x1b[2Jb");
    EXPECT_EQ(service::printable("bell\x07 del\x7f"), "bell\\x07 del\\x7f");
    EXPECT_EQ(service::printable("\xff\xfe"), "\\xff\\xfe");
    EXPECT_EQ(service::printable("cut \xe2\x9c"), "cut \\xe2\\x9c");
    EXPECT_EQ(service::printable("line\nnext\ttab"), "line\nnext\ttab");
}

class ReadFile : public TempDirTest {};

TEST_F(ReadFile, OnlyRegularFilesUpToTheBound) {
    std::ofstream(dir() / "small") << "hello";
    EXPECT_EQ(read_regular_file(dir() / "small", 5).value(), "hello");
    auto big = read_regular_file(dir() / "small", 4);
    ASSERT_FALSE(big.ok());
    EXPECT_EQ(big.error().code, ReadErrc::too_large);
    ASSERT_EQ(::mkfifo((dir() / "fifo").c_str(), 0600), 0);
    for (const std::filesystem::path& p :
         {std::filesystem::path("/dev/zero"), dir() / "fifo", dir()}) {
        auto r =
            read_regular_file(p, 1 << 20);  // returns at once: no blocking open or endless read
        ASSERT_FALSE(r.ok()) << p;
        EXPECT_EQ(r.error().code, ReadErrc::not_regular) << p;
        EXPECT_NE(r.error().message.find(p.string()), std::string::npos);
    }
    EXPECT_EQ(read_regular_file(dir() / "absent", 10).error().code, ReadErrc::not_found);
    auto long_name = read_regular_file(dir() / std::string(300, 'x'), 10);
    ASSERT_FALSE(long_name.ok());
    EXPECT_NE(long_name.error().message.find("too long"), std::string::npos);
}

TEST_F(ReadFile, LinesAreStreamedWithABoundOnEachLine) {
    std::ofstream(dir() / "lines") << "one\n" << std::string(70000, 'x') << "\n\nlast";
    std::vector<std::string> got;
    auto n = for_each_line(dir() / "lines", 65536, [&](std::string_view line, bool cut) {
        got.push_back(cut ? "(cut)" : std::string(line));
    });
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(n.value(), 4u);
    EXPECT_EQ(got, (std::vector<std::string>{"one", "(cut)", "", "last"}));
    ASSERT_EQ(::mkfifo((dir() / "fifo").c_str(), 0600), 0);
    for (const std::filesystem::path& p : {std::filesystem::path("/dev/zero"), dir() / "fifo"}) {
        auto r = for_each_line(p, 10, [](std::string_view, bool) { FAIL() << "a line was read"; });
        ASSERT_FALSE(r.ok()) << p;
        EXPECT_EQ(r.error().code, ReadErrc::not_regular) << p;
    }
}

// A link's key holds its source, every unit's source, options and input
// headers (by name and content), and the link's options: none of them is
// the key of a build of one of its texts, and a change of any is a new key.
TEST(Keys, ALinkIsKeyedByEveryUnitAndItsOptions) {
    const device_db::DeviceIdentity device;
    const auto digest = [&](const device_db::CompileInput& input) {
        return device_db::jit_key_fields(device, input).source_digest;
    };
    device_db::CompileInput link{"", "#error a link", "", {}, {{"float f();", "-DA=1"}}};
    const std::string key = digest(link);
    EXPECT_NE(key, digest({"", "#error a link", "", {}, {}})) << "not the build of its source";
    EXPECT_NE(key, digest({"", "float f();", "-DA=1", {}, {}})) << "nor of its unit";
    auto changed = link;
    changed.link[0].options = "-DA=2";
    EXPECT_NE(digest(changed), key);
    changed = link;
    changed.link[0].headers = {{"a.h", "#define A 1"}};
    EXPECT_NE(digest(changed), key);
    auto renamed = changed;
    renamed.link[0].headers[0].first = "b.h";
    EXPECT_NE(digest(renamed), digest(changed)) << "a header by its name";
    changed = link;
    changed.link.push_back({"kernel void k() {}", ""});
    EXPECT_NE(digest(changed), key);
    EXPECT_EQ(digest(link), key);
    changed = link;
    changed.options = "-cl-mad-enable";
    EXPECT_EQ(device_db::jit_key_fields(device, changed).build_options, "-cl-mad-enable");
}

}  // namespace
}  // namespace kcache::test
