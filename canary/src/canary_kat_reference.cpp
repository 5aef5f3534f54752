// A caller's KAT whose expected outputs its reference computes
// (SourceRequest::kat_reference), in the caller's process: the KAT file's
// inputs go to the reference, and what it returns replaces each output's
// "expected" list in a copy of the file, which kcache-verify then runs. Only
// what the reference needs is read here; kcache-verify checks the whole
// file (kernels_cl/src/verify_kat.hpp).

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "canary_kat.hpp"
#include "kcache/common/fd_io.hpp"
#include "kcache/common/unique_fd.hpp"
#include "kcache/common/work.hpp"

namespace kcache::service {
namespace {

using nlohmann::json;

// The most values one output may hold (the test runs once per driver: a few
// thousand is plenty).
constexpr double kMaxOutputValues = double(1u << 24);

std::vector<float> floats_of(const json& list, const std::string& where) {
    if (!list.is_array()) {
        throw std::runtime_error(where + ": expected an array of numbers");
    }
    std::vector<float> out;
    out.reserve(list.size());
    for (const json& v : list) {
        if (!v.is_number()) {
            throw std::runtime_error(where + ": expected numbers only");
        }
        out.push_back(static_cast<float>(v.get<double>()));
    }
    return out;
}

// The output's values of `arg` ("expected" as in the file, else zeros).
std::vector<float> expected_of(const json& arg, const std::string& where) {
    const json count = arg.value("count", json());
    const double n = count.is_number() ? count.get<double>() : 0;
    if (n < 1 || n != std::floor(n) || n > kMaxOutputValues) {
        throw std::runtime_error(where + ".count: expected a positive integer (at most 2^24)");
    }
    const json& listed = arg["expected"];
    std::vector<float> values = listed.is_array() ? floats_of(listed, where + ".expected")
                                                  : std::vector<float>(std::size_t(n));
    if (values.size() != std::size_t(n)) {
        throw std::runtime_error(where + ": 'expected' must hold 'count' values");
    }
    return values;
}

// Whether the reference's outputs fit the file's: same sizes, finite values.
std::string check_outputs(const std::vector<std::vector<float>>& expected,
                          const std::vector<std::size_t>& counts) {
    for (std::size_t i = 0; i < counts.size(); ++i) {
        if (expected[i].size() != counts[i]) {
            return "the KAT reference resized args[" + std::to_string(i) + "]'s expected values";
        }
        for (std::size_t j = 0; j < counts[i]; ++j) {
            if (!std::isfinite(expected[i][j])) {
                return "the KAT reference gave a value that is not finite for args[" +
                       std::to_string(i) + "][" + std::to_string(j) + "]";
            }
        }
    }
    return {};
}

}  // namespace

Result<std::string, std::string> kat_with_reference(const std::string& kat_text,
                                                    const KatReference& reference) {
    json kat;
    std::vector<std::vector<float>> inputs, expected;
    std::vector<std::size_t> counts;
    try {
        work::add(work::Item::json_parsed);
        kat = json::parse(kat_text);
        if (!kat.is_object() || !kat.contains("args") || !kat["args"].is_array()) {
            return fail(std::string("kat.args: expected an array"));
        }
        for (std::size_t i = 0; i < kat["args"].size(); ++i) {
            const json& a = kat["args"][i];
            const std::string where = "kat.args[" + std::to_string(i) + "]";
            if (!a.is_object()) {
                return fail(where + ": expected an object");
            }
            inputs.push_back(
                a.contains("scalar")
                    ? floats_of(json::array({a.value("value", json())}), where + ".value")
                : a.contains("in") ? floats_of(a["in"], where + ".in")
                                   : std::vector<float>{});
            expected.push_back(a.contains("buffer") && a.contains("expected")
                                   ? expected_of(a, where)
                                   : std::vector<float>{});
            counts.push_back(expected.back().size());
        }
    } catch (const std::exception& e) {  // not JSON, or an argument above
        return fail(std::string(e.what()));
    }
    try {
        if (!reference(inputs, expected)) {
            return fail(std::string("the KAT reference returned an error"));
        }
    } catch (const std::exception& e) {
        return fail(std::string("the KAT reference threw: ") + e.what());
    } catch (...) {
        return fail(std::string("the KAT reference threw"));
    }
    if (std::string wrong = check_outputs(expected, counts); !wrong.empty()) {
        return fail(std::move(wrong));
    }
    for (std::size_t i = 0; i < counts.size(); ++i) {
        if (counts[i] > 0) {
            kat["args"][i]["expected"] = expected[i];
        }
    }
    return kat.dump();
}

Result<KatTempFile, std::string> KatTempFile::write(const std::filesystem::path& dir,
                                                    const std::string& text) {
    std::string path = (dir / "kcache-kat-XXXXXX").string();
    UniqueFd fd(::mkstemp(path.data()));  // mode 0600
    if (!fd.valid()) {
        return fail(path + ": " + std::strerror(errno));
    }
    KatTempFile file{std::filesystem::path(path)};
    if (!write_all(fd.get(), text.data(), text.size())) {
        return fail(path + ": " + std::strerror(errno));
    }
    return file;
}

KatTempFile::~KatTempFile() {
    if (!path_.empty()) {
        ::unlink(path_.c_str());
    }
}

}  // namespace kcache::service
