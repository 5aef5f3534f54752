// Handed-over write-backs (store/src/hot/handover.hpp): the fuzzed bytes as
// the text of one file that an earlier process left beside the hot copies.
//
// Invariants: nothing crashes, throws or hangs; a text that parses writes
// back (handover_text) to one that parses to the same handover, whose text
// is that text again (a fixed point after one round).

#include <string_view>

#include "fuzz_support.hpp"
#include "hot/handover.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace kcache::store::hot;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto parsed = parse_handover(text);
    if (!parsed) {
        return 0;
    }
    const std::string once = handover_text(*parsed);
    const auto again = parse_handover(once);
    kcache::fuzz::check(again.has_value(), "a handover's own text parses");
    kcache::fuzz::check(again && handover_text(*again) == once, "its text is a fixed point");
    kcache::fuzz::check(again && again->hits.size() == parsed->hits.size() &&
                            again->copies.size() == parsed->copies.size() &&
                            again->counts.hits == parsed->counts.hits &&
                            again->counts.misses == parsed->counts.misses,
                        "nothing is lost writing it back");
    return 0;
}
