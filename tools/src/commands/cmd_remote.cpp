// kcache push and pull: the remote tier by hand. push uploads the user
// store's entries (a GET first: objects the server gives back verified are
// skipped, anything else under their key is replaced); pull
// downloads every variant for the devices present, verifies each and stores
// it locally. Both work synchronously and report what they did.

#include <iostream>

#include "kcache/canary/binary_vouch.hpp"
#include "kcache/config/remote_tier.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/service/keys.hpp"
#include "opencl_devices.hpp"
#include "remote_cli.hpp"
#include "warm/kat.hpp"
#include "warm/selection.hpp"

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

// Objects asked of the remote at once by push and pull: one batch, which a
// Redis backend pipelines (one round trip per server).
constexpr std::size_t kBatch = 32;

// Uploads each entry of `batch` unless the server gives back its verified
// object; what answers 200 but is not the object (an HTML page, a truncated
// or flipped object) is replaced and counted so.
void push_batch(remote::Client& client, store::Store& store,
                const std::vector<store::EntryInfo>& batch, PushCounts& n) {
    std::vector<store::KeyFields> fields;
    for (const store::EntryInfo& e : batch) {
        fields.push_back(e.fields);
    }
    const auto held = client.held_many(fields);
    std::vector<store::Entry> entries;  // read first: items point into them
    std::vector<std::size_t> sent;      // indices into `batch`
    auto fails = [&](const store::EntryInfo& e, const std::string& why) {
        ++n.failed;
        std::cerr << "push: " << e.key.hex().substr(0, 16) << " (" << e.fields.kernel_name
                  << "): " << why << "\n";
    };
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (!held[i]) {
            fails(batch[i], held[i].error().message);
            continue;
        }
        if (held[i]->holding == remote::Holding::verified) {
            ++n.present;
            continue;
        }
        auto entry = store.get(batch[i].fields);
        if (!entry) {
            fails(batch[i], "local entry unreadable: " + entry.error().detail);
            continue;
        }
        entries.push_back(std::move(*entry));
        sent.push_back(i);
    }
    std::vector<remote::Client::UploadItem> items;
    for (const store::Entry& e : entries) {
        items.push_back({&e.info.fields, e.bytes, &e.info.provenance});
    }
    const auto up = client.upload_many(items);
    for (std::size_t k = 0; k < sent.size(); ++k) {
        const std::size_t i = sent[k];
        if (!up[k]) {
            fails(batch[i], up[k].error().message);
        } else if (held[i]->holding == remote::Holding::unusable) {
            ++n.replaced;
            std::cerr << "push: " << batch[i].key.hex().substr(0, 16) << " ("
                      << batch[i].fields.kernel_name
                      << "): replaced what the server held: " << held[i]->detail << "\n";
        } else {
            ++n.uploaded;
        }
    }
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
    std::vector<store::EntryInfo> batch;
    for (std::size_t i = 0; i < listed->size(); ++i) {
        if (selected((*listed)[i], args.value("kernel"))) {
            batch.push_back((*listed)[i]);
        }
        if (batch.size() == kBatch || (i + 1 == listed->size() && !batch.empty())) {
            push_batch(**client, *store, batch, n);
            batch.clear();
        }
    }
    for (const remote::UploadNote& note : (*client)->upload_notes()) {
        std::cerr << "push: " << note.count << " upload" << (note.count == 1 ? "" : "s") << ": "
                  << note.reason << "\n";
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

// Fetches the keys of `batch` that the store does not hold, checks and stores each.
void pull_batch(remote::Client& client, store::Store& store,
                const std::vector<store::KeyFields>& batch, PullCounts& n) {
    std::vector<store::KeyFields> wanted;
    for (const store::KeyFields& fields : batch) {
        if (auto info = store.info(store::make_key(fields)); info && *info) {
            ++n.local;
        } else {
            wanted.push_back(fields);
        }
    }
    auto got = client.fetch_many(wanted);
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        const store::KeyFields& fields = wanted[i];
        if (!got[i]) {
            const bool absent = got[i].error().code == remote::RemoteErrc::not_found;
            ++(absent ? n.absent : n.failed);
            if (!absent) {
                std::cerr << "pull: " << fields.kernel_name << ": " << got[i].error().message
                          << "\n";
            }
            continue;
        }
        // Built elsewhere: checked in kcache-verify (its known-answer test, as
        // a remote hit is) before it is stored, since the store trusts what it
        // holds; unless a builder the operator trusts signed it.
        if (got[i]->load_check == remote::LoadCheck::required) {
            if (auto bad = service::vouch_for_binary(verify_helper_path(), {}, fields,
                                                     got[i]->bytes, fields.build_options)) {
                ++n.rejected;
                std::cerr << "pull: " << fields.kernel_name << ": not stored: " << *bad << "\n";
                continue;
            }
        }
        if (auto put = store.put(fields, got[i]->bytes, got[i]->provenance); !put) {
            ++n.failed;
            std::cerr << "pull: " << fields.kernel_name << ": " << put.error().message << "\n";
            continue;
        }
        ++n.pulled;
    }
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
    std::vector<store::KeyFields> batch;
    for (const device_db::DeviceIdentity& id : *devices) {
        for (const kernels::Variant& v : *variants) {
            auto rendered = kernels::render(v);
            if (!kernels::check_support(v, id.extensions) || !rendered) {
                ++n.unsupported;
                continue;
            }
            const device_db::CompileInput input{v.id(), rendered->source, rendered->options,
                                                rendered->entry_points};
            batch.push_back(device_db::jit_key_fields(id, input));
            if (batch.size() == kBatch) {
                pull_batch(**client, *store, batch, n);
                batch.clear();
            }
        }
    }
    pull_batch(**client, *store, batch, n);
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
        exit_code = report(Exit::usage, command, client.error().message);
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
