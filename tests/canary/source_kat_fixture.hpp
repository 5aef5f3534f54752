#pragma once
// What the tests of a SourceRequest's own known-answer test share: a PoCL
// context under the test layer (FaultLayerContextTest), the example operator
// library's my_saxpy (examples/kat/) and KAT files made from its test, and
// the verdicts the requests kept under <store>/canary/kat/.

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "canary_support.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/service/service_api.hpp"
#include "temp_dir.hpp"

namespace kcache::test {

class SourceKatTest : public FaultLayerContextTest {
  protected:
    // A Config on dir()/`store` under `policy`.
    Config config(CanaryPolicy policy, const std::string& store = "store") const {
        return canary_config(dir() / store, policy);
    }

    static std::string example(const std::string& file) {
        return *read_regular_file(std::filesystem::path(KCACHE_KAT_EXAMPLE_DIR) / file, 1u << 20);
    }
    // The example's KAT with args[2][5] expected 1 more than my_saxpy computes.
    static std::string wrong_kat() {
        nlohmann::json kat = nlohmann::json::parse(example("saxpy.kat.json"));
        kat["args"][2]["expected"][5] = kat["args"][2]["expected"][5].get<double>() + 1;
        return kat.dump();
    }
    // The example's KAT whose output's expected values a reference computes.
    static std::string reference_kat() {
        nlohmann::json kat = nlohmann::json::parse(example("saxpy.kat.json"));
        kat["args"][2]["expected"] = "reference";
        return kat.dump();
    }

    // Writes `kat_text` to dir()/`file`; returns its path.
    std::filesystem::path write_kat(const std::string& kat_text,
                                    const std::string& file = "saxpy.kat.json") const {
        std::ofstream(dir() / file) << kat_text;
        return dir() / file;
    }

    // A request for the example's my_saxpy with the KAT file `kat`.
    static SourceRequest saxpy(const std::filesystem::path& kat) {
        SourceRequest r;
        r.name = "my_saxpy";
        r.source = example("saxpy.cl");
        r.kat = kat;
        return r;
    }

    // Every verdict kept under `store`/canary/kat/.
    std::vector<canary::Verdict> kept_verdicts(const std::string& store = "store") const {
        std::vector<canary::Verdict> all;
        std::error_code ec;
        for (const auto& e :
             std::filesystem::directory_iterator(canary::canary_dir(dir() / store) / "kat", ec)) {
            for (const canary::Record& r : canary::load_records(e.path())) {
                all.insert(all.end(), r.verdicts.begin(), r.verdicts.end());
            }
        }
        return all;
    }
};

// my_saxpy's reference, y = a * x + y, over the KAT's arguments (a, x, y, n).
inline void saxpy_reference(const std::vector<std::vector<float>>& in,
                            std::vector<std::vector<float>>& expected) {
    for (std::size_t i = 0; i < expected[2].size(); ++i) {
        expected[2][i] = in[0][0] * in[1][i] + in[2][i];
    }
}

}  // namespace kcache::test
