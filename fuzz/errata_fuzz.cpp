// An errata document (canary/src/errata.cpp): the JSON of a signed errata
// file, a pack's errata table or a remote object, as from_json reads it.
//
// Invariants: nothing crashes, throws or hangs; an accepted document writes
// back (to_json) to a document that reads again to the same errata (same
// ids, same evidence); every accepted erratum names a kernel, has the
// verdict the grammar allows and a driver range that is not empty; version
// comparison is antisymmetric on the bounds it holds.

#include <string_view>

#include "fuzz_support.hpp"
#include "kcache/canary/errata.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using kcache::fuzz::check;
    namespace errata = kcache::errata;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto parsed = errata::from_json(text);
    if (!parsed) {
        check(!parsed.error().message.empty(), "a refused document says why");
        return 0;
    }
    auto again = errata::from_json(errata::to_json(*parsed));
    check(again.ok(), "an accepted document writes back to one that reads");
    check(again->size() == parsed->size(), "the same number of errata");
    for (std::size_t i = 0; i < parsed->size(); ++i) {
        const errata::Erratum& e = (*parsed)[i];
        check(!e.kernel.empty(), "an accepted erratum names a kernel");
        check((*again)[i].id() == e.id(), "the same erratum after a round trip");
        check((*again)[i].evidence == e.evidence, "the same evidence after a round trip");
        const int a = errata::compare_versions(e.driver_min, e.driver_max);
        check(a == -errata::compare_versions(e.driver_max, e.driver_min),
              "version comparison is antisymmetric");
        check(e.driver_min.empty() || e.driver_max.empty() || a <= 0,
              "an accepted range is not empty");
        kcache::canary::DriverIdentity d;
        d.vendor_id = e.vendor_id;
        d.driver = e.driver_min;
        (void)e.covers(d);
    }
    return 0;
}
