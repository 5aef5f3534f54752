// Signing a pack: the trusted comment that says what the pack is, and the
// PACK.minisig written beside it.

#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <set>

#include "kcache/store/pack.hpp"
#include "kcache/store/trust.hpp"
#include "schema.hpp"

namespace kcache::store {
namespace fs = std::filesystem;
namespace {

// At most two distinct values per field, each cut to a length, so that the
// comment stays within minisign's line length (an ocloc identity with its
// library digests is about 220 bytes).
constexpr std::size_t kMaxListed = 2;
constexpr std::size_t kMaxCompiler = 300;
constexpr std::size_t kMaxOther = 100;
constexpr std::size_t kMaxComment = 1000;

// Comments are one line of tab-separated fields: no control characters in a value.
std::string clean(std::string_view v, std::size_t max) {
    std::string out;
    for (char c : v.substr(0, max)) {
        out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
    return out;
}

std::string listed(const std::set<std::string>& values, std::size_t max) {
    std::string out;
    std::size_t n = 0;
    for (const std::string& v : values) {
        if (n++ == kMaxListed) {
            return out + " +" + std::to_string(values.size() - kMaxListed) + " more";
        }
        out += (out.empty() ? "" : ", ") + clean(v, max);
    }
    return out.empty() ? "-" : out;
}

std::string utc(std::time_t t) {
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace

Result<std::string, StoreError> pack_trusted_comment(const fs::path& pack) {
    auto opened = Pack::open(pack);
    auto entries =
        opened ? opened->list() : Result<std::vector<EntryInfo>, StoreError>(fail(opened.error()));
    if (!entries) {
        return fail(entries.error());
    }
    std::set<std::string> producers;
    std::set<std::string> compilers;
    for (const EntryInfo& e : *entries) {
        producers.insert(e.provenance.producer_version);
        compilers.insert(e.fields.compiler_id);  // AOT: ocloc; JIT: the driver
    }
    for (const AotCoverage& c : opened->aot_coverage()) {
        compilers.insert(c.compiler);
    }
    struct stat st {};
    const std::time_t created = ::stat(pack.c_str(), &st) == 0 ? st.st_mtime : std::time(nullptr);
    std::string comment = "kcache pack\tschema:" + std::to_string(schema::kCurrentVersion) +
                          "\tentries:" + std::to_string(entries->size()) +
                          "\tproducer:" + listed(producers, kMaxOther) +
                          "\tcompiler:" + listed(compilers, kMaxCompiler) +
                          "\tcreated:" + utc(created) +
                          "\tfile:" + clean(pack.filename().string(), kMaxOther);
    comment.resize(std::min(comment.size(), kMaxComment));
    return comment;
}

Result<Signature, StoreError> sign_pack(const fs::path& pack, const SecretKey& key) {
    auto comment = pack_trusted_comment(pack);
    if (!comment) {
        return fail(comment.error());
    }
    auto sig =
        sign_file(pack, key, *comment, "signature from kcache secret key " + key_id_hex(key.id));
    if (!sig) {
        return fail(StoreError{StoreErrc::io, sig.error().message});
    }
    auto written =
        write_text_file(signature_path(pack), format_signature(*sig), 0644, Replace::yes);
    if (!written) {
        return fail(StoreError{StoreErrc::io, written.error().message});
    }
    return std::move(*sig);
}

}  // namespace kcache::store
