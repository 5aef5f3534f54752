#include "binary_vouch.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <map>
#include <mutex>

#include "kcache/common/sha256.hpp"
#include "kcache/compiler/jit.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/store/key.hpp"

namespace kcache::service {
namespace {

// Verdicts given in this process, by key and digest of the bytes.
struct Verdicts {
    std::mutex mu;
    std::map<std::string, std::optional<std::string>> by_binary;
};

Verdicts& verdicts() {
    static Verdicts v;
    return v;
}

// Why the helper's run `r` did not vouch for the binary; nullopt when it did.
std::optional<std::string> verdict_of(const std::string& helper, const compiler::RunResult& r) {
    switch (r.outcome) {
        case compiler::ChildExit::timed_out:
            return "loading the binary in kcache-verify did not finish within " +
                   std::to_string(kVouchTimeout.count()) + " s";
        case compiler::ChildExit::signaled:
            return "loading the binary crashed kcache-verify (signal " + std::to_string(r.signal) +
                   ")";
        case compiler::ChildExit::spawn_failed:
            return "nothing vouches for the binary: cannot start " + helper + ": " +
                   std::error_code(r.spawn_errno, std::generic_category()).message();
        case compiler::ChildExit::exited:
            break;
    }
    if (r.exit_code == 0 && r.out.rfind("loaded\n", 0) == 0) {
        return std::nullopt;
    }
    std::string why = r.out.substr(r.out.find('\n') + 1) + r.err;
    while (!why.empty() && why.back() == '\n') {
        why.pop_back();
    }
    return "kcache-verify did not load the binary (exit " + std::to_string(r.exit_code) +
           "): " + why;
}

// Whether `dir`/`name` records a good verdict; records one when `record`.
bool vouched_on_node(const std::filesystem::path& dir, const std::string& name, bool record) {
    if (dir.empty()) {
        return false;
    }
    const std::filesystem::path marker = dir / name;
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

std::optional<std::string> vouch_for_binary(const std::string& helper,
                                            const std::filesystem::path& vouched_dir,
                                            const store::KeyFields& fields,
                                            std::span<const std::uint8_t> bytes,
                                            const std::string& options) {
    const std::string id =
        store::make_key(fields).hex() + ":" +
        sha256_hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    {
        std::lock_guard g(verdicts().mu);
        if (auto found = verdicts().by_binary.find(id); found != verdicts().by_binary.end()) {
            return found->second;
        }
    }
    const std::string marker = sha256_hex(id);
    if (vouched_on_node(vouched_dir, marker, false)) {
        std::lock_guard g(verdicts().mu);
        verdicts().by_binary.emplace(id, std::nullopt);
        return std::nullopt;
    }
    compiler::SpawnSpec spec;
    spec.program = helper;
    spec.args = {
        "--check",          "load",       "--options",          options,    "--device",
        fields.device_name, "--platform", fields.platform_name, "--driver", fields.driver_version};
    spec.stdin_data.assign(bytes.begin(), bytes.end());
    const compiler::RunResult r = compiler::run(spec, compiler::Clock::now() + kVouchTimeout);
    std::optional<std::string> verdict = verdict_of(helper, r);
    if (r.outcome != compiler::ChildExit::spawn_failed) {  // a missing helper may come back
        std::lock_guard g(verdicts().mu);
        verdicts().by_binary.emplace(id, verdict);
    }
    if (!verdict) {
        vouched_on_node(vouched_dir, marker, true);
    }
    return verdict;
}

}  // namespace kcache::service
