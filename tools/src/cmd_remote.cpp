// kcache push and pull: the remote tier by hand. push uploads the user
// store's entries (a GET first: objects the server gives back verified are
// skipped, anything else under their key is replaced); pull
// downloads every variant for the devices present, verifies each and stores
// it locally. Both work synchronously and report what they did.

#include <iostream>

#include "kat.hpp"
#include "kcache/cache/binary_vouch.hpp"
#include "kcache/cache/keys.hpp"
#include "kcache/cache/remote_tier.hpp"
#include "kcache/device_db/database.hpp"
#include "opencl_devices.hpp"
#include "remote_cli.hpp"
#include "selection.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

constexpr const char* kExitRemote =
    "  2  no remote configured (KCACHE_REMOTE), or for push a read-only one or no\n"
    "     signing key while signed objects are required\n";

// Prints `counts` as JSON or as one line "push: 3 uploaded, …".
void print_counts(std::string_view command, const std::vector<std::pair<std::string, int>>& counts,
                  bool as_json) {
    json j = json::object();
    std::string line = std::string(command) + ":";
    for (const auto& [name, n] : counts) {
        j[name] = n;
        line += (line.back() == ':' ? " " : ", ") + std::to_string(n) + " " + name;
    }
    std::cout << (as_json ? j.dump(2) : line) << "\n";
}

// Whether entry `e` belongs to the kernel named `name` (all when absent).
bool selected(const store::EntryInfo& e, const std::optional<std::string>& name) {
    if (!name) {
        return true;
    }
    const std::string& k = e.fields.kernel_name;
    return k == *name || k.rfind(*name + ":", 0) == 0;
}

struct PushCounts {
    int uploaded = 0, present = 0, replaced = 0, failed = 0;
};

// Uploads entry `e` unless the server gives back its verified object; what
// answers 200 but is not the object (an HTML page, a truncated or flipped
// object) is replaced and counted so.
void push_one(remote::Client& client, store::Store& store, const store::EntryInfo& e,
              PushCounts& n) {
    auto held = client.held(e.fields);
    if (held && held->holding == remote::Holding::verified) {
        ++n.present;
        return;
    }
    auto entry = held ? store.get(e.fields) : Result<store::Entry, store::Miss>(store::Entry{});
    Status<remote::RemoteError> up = Ok{};
    if (held && entry) {
        up = client.upload(e.fields, entry->bytes, entry->info.provenance);
    }
    const std::string what =
        "push: " + e.key.hex().substr(0, 16) + " (" + e.fields.kernel_name + "): ";
    if (held && entry && up) {
        if (held->holding == remote::Holding::unusable) {
            ++n.replaced;
            std::cerr << what << "replaced what the server held: " << held->detail << "\n";
        } else {
            ++n.uploaded;
        }
        return;
    }
    ++n.failed;
    std::cerr << what
              << (!held    ? held.error().message
                  : !entry ? "local entry unreadable: " + entry.error().detail
                           : up.error().message)
              << "\n";
}

int run_push(const ParsedArgs& args) {
    int code = 0;
    auto config = load_cli_config("push", code);
    auto client = config ? open_cli_remote("push", *config, code) : std::nullopt;
    if (!client) {
        return code;
    }
    if (!*client || (*client)->settings().access == remote::Access::read_only) {
        return report(Exit::usage, "push",
                      *client ? "the remote is read-only (KCACHE_REMOTE_READONLY): nothing to do"
                              : "no remote configured: set KCACHE_REMOTE");
    }
    if (auto why = (*client)->why_no_uploads()) {
        return report(Exit::usage, "push", *why);
    }
    auto store = open_user_store("push", code, store::OpenMode::read_only);
    auto listed = store ? store->list()
                        : Result<std::vector<store::EntryInfo>, store::StoreError>(
                              std::vector<store::EntryInfo>{});
    if (!store || !listed) {
        return store ? report(exit_for(listed.error()), "push", listed.error().message) : code;
    }
    PushCounts n;
    for (const store::EntryInfo& e : *listed) {
        if (selected(e, args.value("kernel"))) {
            push_one(**client, *store, e, n);
        }
    }
    print_counts("push",
                 {{"uploaded", n.uploaded},
                  {"already present", n.present},
                  {"replaced", n.replaced},
                  {"failed", n.failed}},
                 args.has("json"));
    return n.failed > 0 ? static_cast<int>(Exit::action_needed) : 0;
}

struct PullCounts {
    int pulled = 0, local = 0, absent = 0, unsupported = 0, rejected = 0, failed = 0;
};

void pull_one(remote::Client& client, store::Store& store, const store::KeyFields& fields,
              PullCounts& n) {
    if (auto info = store.info(store::make_key(fields)); info && *info) {
        ++n.local;
        return;
    }
    auto got = client.fetch(fields);
    if (!got) {
        if (got.error().code == remote::RemoteErrc::not_found) {
            ++n.absent;
            return;
        }
        ++n.failed;
        std::cerr << "pull: " << fields.kernel_name << ": " << got.error().message << "\n";
        return;
    }
    // Built elsewhere: checked in kcache-verify (its known-answer test, as a
    // remote hit is) before it is stored, since the store trusts what it holds.
    if (auto bad = service::vouch_for_binary(verify_helper_path(), {}, fields, got->bytes,
                                             fields.build_options)) {
        ++n.rejected;
        std::cerr << "pull: " << fields.kernel_name << ": not stored: " << *bad << "\n";
        return;
    }
    if (auto put = store.put(fields, got->bytes, got->provenance); !put) {
        ++n.failed;
        std::cerr << "pull: " << fields.kernel_name << ": " << put.error().message << "\n";
        return;
    }
    ++n.pulled;
}

int run_pull(const ParsedArgs& args) {
    int code = 0;
    auto config = load_cli_config("pull", code);
    auto client = config ? open_cli_remote("pull", *config, code) : std::nullopt;
    if (client && !*client) {
        return report(Exit::usage, "pull", "no remote configured: set KCACHE_REMOTE");
    }
    auto variants =
        client
            ? select_variants(args.list_value("kernels"), args.list_value("dtypes"))
            : Result<std::vector<kernels::Variant>, std::string>(std::vector<kernels::Variant>{});
    if (!variants) {
        return report(Exit::not_found, "pull", variants.error());
    }
    auto store = client ? open_user_store("pull", code) : std::nullopt;
    auto devices = store ? probe_selected("pull", args.value("device"), code) : std::nullopt;
    if (!devices) {
        return code;
    }
    PullCounts n;
    for (const device_db::DeviceIdentity& id : *devices) {
        for (const kernels::Variant& v : *variants) {
            auto rendered = kernels::render(v);
            if (!kernels::check_support(v, id.extensions) || !rendered) {
                ++n.unsupported;
                continue;
            }
            const service::CompileInput input{v.id(), rendered->source, rendered->options,
                                              rendered->entry_points};
            pull_one(**client, *store, service::jit_key_fields(id, input), n);
        }
    }
    print_counts("pull",
                 {{"pulled", n.pulled},
                  {"already local", n.local},
                  {"not on the server", n.absent},
                  {"unsupported", n.unsupported},
                  {"rejected", n.rejected},
                  {"failed", n.failed}},
                 args.has("json"));
    return n.failed + n.rejected > 0 ? static_cast<int>(Exit::action_needed) : 0;
}

}  // namespace

std::optional<std::unique_ptr<remote::Client>> open_cli_remote(std::string_view command,
                                                               const Config& config,
                                                               int& exit_code) {
    auto client = service::open_remote(config);
    if (!client) {
        exit_code = report(Exit::usage, command, client.error());
        return std::nullopt;
    }
    return std::move(*client);
}

Command push_command() {
    return {{"push",
             "[options]",
             "upload the user store's entries to the remote tier",
             "Every entry of the user store (or of --kernel) is uploaded to the remote\n"
             "(KCACHE_REMOTE) as a self-verifying object, unless a GET gives back that very\n"
             "object, verified as a download is (key recomputed, checksum). What answers\n"
             "there but is not the object (an HTML page, a truncated or damaged object) is\n"
             "replaced and counted as replaced. Uploads are synchronous; the counts go to\n"
             "stdout, each failure to stderr. Needs a writable remote (not\n"
             "KCACHE_REMOTE_READONLY) and, while signed objects are required (the default,\n"
             "KCACHE_REMOTE_REQUIRE_SIGNED), a signing key (KCACHE_REMOTE_SIGNING_KEY, made\n"
             "by `kcache keygen`) that signs every object. A server that answers 429, or 401/403 "
             "with a\n"
             "Retry-After, is left alone for the rest of the run (the circuit breaker).\n",
             {{"kernel", Arity::value, "NAME", "only entries of this kernel (name or variant id)"},
              {"json", Arity::flag, "", "print the counts as JSON"}},
             0,
             0,
             std::string(kExitOk) +
                 "  1  some entries could not be uploaded (push's job is uploading: unlike\n"
                 "     warm, a failed upload is an error without KCACHE_REMOTE_REQUIRED)\n" +
                 kExitRemote + kExitStore},
            run_push};
}

Command pull_command() {
    return {{"pull",
             "[options]",
             "download every variant for the devices present from the remote tier",
             "For every OpenCL device (or --device) and kernel variant (or the\n"
             "--kernels/--dtypes selection) the key the runtime would look up is fetched\n"
             "from the remote (KCACHE_REMOTE); each object is verified (key recomputed\n"
             "from its fields, payload checksum, signature), its known-answer test runs in\n"
             "the kcache-verify helper (a binary the driver cannot load or that computes\n"
             "wrong numbers is rejected, not stored), and it is stored in the user store.\n"
             "Variants already stored locally are not fetched. Counts on stdout.\n",
             {{"device", Arity::value, "SEL", "only this device: index or name substring"},
              {"kernels", Arity::value, "LIST", "kernel names or aliases (default: all)"},
              {"dtypes", Arity::value, "LIST", "element types, e.g. f32,f16 (default: all)"},
              {"json", Arity::flag, "", "print the counts as JSON"}},
             0,
             0,
             std::string(kExitOk) +
                 "  1  some objects failed (corrupt, server error, store) or were rejected\n" +
                 "  2  no remote configured (KCACHE_REMOTE), or a bad remote setting\n" +
                 "  3  unknown device, kernel or dtype\n" + kExitStore + kExitEnvironment},
            run_pull};
}

}  // namespace kcache::cli
