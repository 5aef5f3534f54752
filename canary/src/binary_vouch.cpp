#include "binary_vouch.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <map>
#include <mutex>

#include "kcache/cl/kat.hpp"
#include "kcache/cl/launch.hpp"
#include "kcache/common/fork.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/compiler/jit.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/kernels/reference.hpp"
#include "kcache/store/key.hpp"

namespace kcache::service {
namespace {

// Verdicts given in this process, by check, key and digest of the bytes.
struct Verdicts {
    std::mutex mu;
    std::map<std::string, std::optional<std::string>> by_binary;
};

// This process's (a forked child starts afresh: fork.hpp).
Verdicts& verdicts() {
    static fork_safety::PerProcess<Verdicts> v;
    return v.get();
}

// One run of the helper: `mode` is {"--variant", ID} or {"--check", "load"}.
struct Check {
    std::vector<std::string> mode;
    const char* good;  // the first line of a good verdict
    const char* what;  // what was done, for people
};

Check load_check() {
    return {{"--check", "load"}, "loaded", "load the binary"};
}

// Why the helper's run `r` of `check` did not vouch for the binary; nullopt when it did.
std::optional<std::string> verdict_of(const std::string& helper, const Check& check,
                                      const compiler::RunResult& r) {
    switch (r.outcome) {
        case compiler::ChildExit::timed_out:
            return std::string("kcache-verify did not ") + check.what + " within " +
                   std::to_string(kVouchTimeout.count()) + " s";
        case compiler::ChildExit::signaled:
            return std::string("kcache-verify crashed (signal ") + std::to_string(r.signal) +
                   ") trying to " + check.what;
        case compiler::ChildExit::spawn_failed:
            return "nothing vouches for the binary: cannot start " + helper + ": " +
                   std::error_code(r.spawn_errno, std::generic_category()).message();
        case compiler::ChildExit::exited:
            break;
    }
    if (r.exit_code == 0 && r.out.rfind(std::string(check.good) + "\n", 0) == 0) {
        return std::nullopt;
    }
    std::string why = r.out.substr(r.out.find('\n') + 1) + r.err;
    while (!why.empty() && why.back() == '\n') {
        why.pop_back();
    }
    return std::string("kcache-verify did not ") + check.what + " (exit " +
           std::to_string(r.exit_code) + "): " + why;
}

// Whether `dir`/`name` records a good verdict; records one when `record`.
bool vouched_on_node(const std::filesystem::path& dir, const std::string& name, bool record) {
    if (dir.empty()) {
        return false;
    }
    const std::string marker = dir.native() + '/' + name;
    if (!record) {
        struct stat st {};
        return ::lstat(marker.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    }
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        return false;  // a read-only store: the verdict lasts for the process
    }
    const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        ::close(fd);
    }
    return fd >= 0;
}

compiler::RunResult run_check(const std::string& helper, const Check& check,
                              const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
                              const std::string& options) {
    compiler::SpawnSpec spec;
    spec.program = helper;
    spec.args = check.mode;
    spec.args.insert(spec.args.end(),
                     {"--options", options, "--device", fields.device_name, "--platform",
                      fields.platform_name, "--driver", fields.driver_version});
    spec.stdin_data.assign(bytes.begin(), bytes.end());
    return compiler::run(spec, compiler::Clock::now() + kVouchTimeout);
}

// The verdict of `check` of `bytes`, from this process's, this node's or a
// new run of the helper.
std::optional<std::string> vouch_with(const std::string& helper,
                                      const std::filesystem::path& vouched_dir, const Check& check,
                                      const store::KeyFields& fields,
                                      std::span<const std::uint8_t> bytes,
                                      const std::string& options) {
    const std::string key_hex = store::make_key(fields).hex();
    const std::string digest = sha256_hex(
        check.mode.back() + ":" +
        sha256_hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
    const std::string id = key_hex + "." + digest;  // also the node's record
    {
        std::lock_guard g(verdicts().mu);
        if (auto found = verdicts().by_binary.find(id); found != verdicts().by_binary.end()) {
            return found->second;
        }
    }
    if (vouched_on_node(vouched_dir, id, false)) {
        std::lock_guard g(verdicts().mu);
        verdicts().by_binary.emplace(id, std::nullopt);
        return std::nullopt;
    }
    const compiler::RunResult r = run_check(helper, check, fields, bytes, options);
    std::optional<std::string> verdict = verdict_of(helper, check, r);
    if (verdict && check.mode.front() == "--variant" && r.outcome == compiler::ChildExit::exited &&
        r.out.rfind(std::string(cl::to_string(cl::KatState::no_kat)) + "\n", 0) == 0) {
        // The helper knows no test for it after all: a load is all that can be checked.
        return vouch_with(helper, vouched_dir, load_check(), fields, bytes, options);
    }
    if (r.outcome != compiler::ChildExit::spawn_failed) {  // a missing helper may come back
        std::lock_guard g(verdicts().mu);
        verdicts().by_binary.emplace(id, verdict);
    }
    if (!verdict) {
        vouched_on_node(vouched_dir, id, true);
    }
    return verdict;
}

}  // namespace

std::string verify_helper_beside(const std::string& jit_helper) {
    const std::string jit = jit_helper.empty() ? compiler::default_helper_path() : jit_helper;
    const auto beside = std::filesystem::path(jit).parent_path() / "kcache-verify";
    if (::access(beside.c_str(), X_OK) == 0) {
        return beside.string();
    }
#ifdef KCACHE_VERIFY_BUILD_PATH
    if (::access(KCACHE_VERIFY_BUILD_PATH, X_OK) == 0) {
        return KCACHE_VERIFY_BUILD_PATH;
    }
#endif
    return beside.string();
}

Result<kernels::Variant, canary::CanaryError> kat_variant_or_why(const store::KeyFields& fields) {
    using canary::CanaryErrc;
    const canary::CanaryError none{CanaryErrc::no_test,
                                   "no known-answer test for " + fields.kernel_name};
    auto variant = kernels::parse_variant(fields.kernel_name);
    if (!variant || !cl::has_kat(variant->kernel) || !kernels::variant_tolerance(*variant) ||
        !cl::variant_local_size(*variant)) {
        return fail(none);
    }
    auto rendered = kernels::render(*variant);
    if (!rendered) {
        return fail(none);
    }
    if (fields.source_digest != sha256_hex(rendered->source)) {
        // The test checks the ABI of the registry's own source only.
        return fail(canary::CanaryError{
            CanaryErrc::no_test,
            fields.kernel_name +
                " was built from other source text than this kcache's registry renders for it"});
    }
    return std::move(*variant);
}

std::optional<kernels::Variant> kat_variant_of(const store::KeyFields& fields) {
    auto variant = kat_variant_or_why(fields);
    return variant ? std::optional<kernels::Variant>(std::move(*variant)) : std::nullopt;
}

bool built_elsewhere(const store::Tier& tier, const store::EntryInfo& entry) {
    return tier.kind == store::Tier::Kind::pack ||
           (entry.provenance.origin == store::Origin::imported &&
            entry.verification != store::Verification::passed);
}

namespace {

// The name of the node's record that kcache put the entry under `key`:
// <key hex>.<digest>, a verdict's form, so that gc drops it with the key.
std::string stored_here_name(const store::Key& key) {
    static const std::string digest = sha256_hex(std::string_view("stored here"));
    return key.hex() + "." + digest;
}

}  // namespace

bool stored_here(const std::filesystem::path& dir, const store::Key& key) {
    return vouched_on_node(dir, stored_here_name(key), false);
}

bool record_stored_here(const std::filesystem::path& dir, const store::Key& key) {
    return vouched_on_node(dir, stored_here_name(key), true);
}

std::optional<std::string> vouch_for_binary(const std::string& helper,
                                            const std::filesystem::path& vouched_dir,
                                            const store::KeyFields& fields,
                                            std::span<const std::uint8_t> bytes,
                                            const std::string& options) {
    if (auto variant = kat_variant_of(fields)) {
        const Check kat{{"--variant", variant->id()},
                        cl::to_string(cl::KatState::passed),
                        "pass the known-answer test of the binary"};
        return vouch_with(helper, vouched_dir, kat, fields, bytes, options);
    }
    return vouch_with(helper, vouched_dir, load_check(), fields, bytes, options);
}

std::size_t drop_stale_verdicts(const std::filesystem::path& vouched_dir,
                                const std::set<std::string>& live_keys) {
    auto is_hex = [](std::string_view s) {
        return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
    };
    std::size_t removed = 0;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(vouched_dir, ec), end; !ec && it != end;
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        // <key hex>.<digest hex>, as vouch_with() names a verdict.
        const std::string_view key = std::string_view(name).substr(0, 64);
        if (name.size() != 129 || name[64] != '.' || !is_hex(key) ||
            !is_hex(std::string_view(name).substr(65)) || live_keys.count(std::string(key)) > 0) {
            continue;
        }
        std::error_code ignored;
        removed += std::filesystem::remove(it->path(), ignored) ? 1 : 0;
    }
    return removed;
}

}  // namespace kcache::service
