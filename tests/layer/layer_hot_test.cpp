// The layer's hits from the store's hot copies (label layer): a copy that
// fails its check never reaches the driver, whichever check refuses it.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kcache/common/read_file.hpp"
#include "kcache/store/codec.hpp"
#include "layer_fixture.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
using LayerHotCopies = LayerTest;

// Copy layout (store/src/hot/hot_copies.hpp): magic 8, key_len 8,
// raw_size 8, checksum 16, tag 32, key record, bytes.
constexpr std::size_t kRawSizeAt = 16, kChecksumAt = 24, kHeaderSize = 72;

std::string bytes_of(const fs::path& p) {
    auto text = read_regular_file(p, std::size_t{64} << 20);
    return text.ok() ? std::move(text.value()) : std::string();
}

// The hot copies under `store`, sorted by name.
std::vector<fs::path> copies_in(const fs::path& store) {
    std::vector<fs::path> found;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(store / "hot", ec), end; !ec && it != end;
         it.increment(ec)) {
        if (it->path().filename().string().size() == 64) {
            found.push_back(it->path());
        }
    }
    std::sort(found.begin(), found.end());
    return found;
}

std::uint64_t key_len_of(const std::string& copy) {
    std::uint64_t n = 0;
    std::memcpy(&n, copy.data() + 8, 8);  // little-endian, as this host
    return n;
}

// `copy` (a whole file) with its bytes replaced by those of `other`: its own
// header and key record, `other`'s bytes and size; the checksum is left as
// it was, or made the new bytes' (the tag, keyed by the store's secret,
// cannot be).
std::string with_bytes_of(const std::string& copy, const std::string& other, bool new_checksum) {
    std::string out = copy.substr(0, kHeaderSize + key_len_of(copy));
    const std::string bytes = other.substr(kHeaderSize + key_len_of(other));
    const std::uint64_t size = bytes.size();
    std::memcpy(out.data() + kRawSizeAt, &size, 8);
    if (new_checksum) {
        const auto sum = kcache::store::checksum_of(
            {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
        std::memcpy(out.data() + kChecksumAt, sum.data(), sum.size());
    }
    return out + bytes;
}

TEST_F(LayerHotCopies, ACopyHoldingAnotherProgramsBytesIsRefusedAndTheEntryAnswers) {
    const auto driver = run(With::driver, KCACHE_TEST_PROBE_PATH, {"entry"});
    const auto first = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"});
    ASSERT_EQ(first.out, driver.out) << first.err;
    const auto copies = copies_in(store_dir());
    ASSERT_GE(copies.size(), 2u) << "the probe's programs left no hot copies";
    std::vector<std::string> sound;
    for (const auto& c : copies) {
        sound.push_back(bytes_of(c));
    }
    for (const bool new_checksum : {false, true}) {
        SCOPED_TRACE(new_checksum ? "checksum recomputed: the tag refuses it"
                                  : "checksum left: the checksum refuses it");
        // Each copy holds the next one's bytes: a sound binary of another
        // program, which the driver would load without complaint.
        for (std::size_t i = 0; i < copies.size(); ++i) {
            std::ofstream(copies[i], std::ios::binary | std::ios::trunc)
                << with_bytes_of(sound[i], sound[(i + 1) % sound.size()], new_checksum);
        }
        const auto second = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"});
        EXPECT_EQ(second.out, driver.out) << second.err;
        const auto traced = trace_lines(second.err);
        EXPECT_EQ(std::count_if(traced.begin(), traced.end(),
                                [](const std::string& l) { return l.rfind("HIT ", 0) == 0; }),
                  4)
            << second.err;
        // The refused copies were replaced with their entries' at the write-back.
        for (std::size_t i = 0; i < copies.size(); ++i) {
            EXPECT_TRUE(bytes_of(copies[i]) == sound[i]) << copies[i];
        }
    }
}

// With no copies, every hit of a second run comes from SQLite, and the
// cache, closed by an exit handler, decodes each entry to write its copy
// back: after the main thread's thread_local objects are gone.
TEST_F(LayerHotCopies, HitsFromTheDatabaseWriteTheirCopiesBackAtExit) {
    const auto first = run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const auto copies = copies_in(store_dir());
    ASSERT_GE(copies.size(), 2u) << "the probe's programs left no hot copies";
    for (const auto& c : copies) {
        fs::remove(c);
    }
    // Freed memory filled (glibc): a use after free crashes at once.
    const auto second =
        run(With::layer, KCACHE_TEST_PROBE_PATH, {"entry"}, {"MALLOC_PERTURB_=165"});
    EXPECT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(second.out, first.out) << second.err;
    EXPECT_EQ(copies_in(store_dir()), copies) << "the copies were not written back";
}

}  // namespace
}  // namespace kcache::test
