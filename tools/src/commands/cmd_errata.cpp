// kcache errata list | export | import: the errata feed (kcache/canary/errata.hpp).

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "kcache/canary/errata.hpp"
#include "kcache/canary/pack_trust.hpp"
#include "kcache/common/fd_io.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/config/remote_tier.hpp"
#include "kcache/store/pack_errata.hpp"
#include "kcache/store/trust.hpp"
#include "reports/canary_report.hpp"
#include "reports/errata_export.hpp"
#include "reports/errata_report.hpp"
#include "signing.hpp"

namespace kcache::cli {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

int run_list(const ParsedArgs& args, const Config& config) {
    int code = 0;
    const auto all = applied_errata("errata", config, code);
    if (code != 0) {
        return code;
    }
    if (args.has("json")) {
        json list = json::parse(errata::to_json(all))["errata"];
        for (std::size_t i = 0; i < all.size(); ++i) {
            list[i]["id"] = all[i].id();
        }
        std::cout << list.dump(2) << "\n";
        return 0;
    }
    if (all.empty()) {
        std::cout << "no errata (import some with `kcache errata import FILE`)\n";
    }
    for (const errata::Erratum& e : all) {
        std::cout << e.id() << "  " << e.describe() << "\n    source: " << e.source << "\n";
    }
    return 0;
}

// Whether the file at `path` is an SQLite file (a pack) rather than JSON.
bool is_pack_file(const fs::path& path) {
    static constexpr char kMagic[] = "SQLite format 3";
    auto fd = open_regular_file(path);
    char head[sizeof kMagic] = {};
    return fd && pread_all(fd->get(), head, sizeof head, 0) &&
           std::memcmp(head, kMagic, sizeof kMagic) == 0;
}

// The errata of the file or pack at `path`, judged as the runtime judges
// packs; `from` gets what to record as their source.
Result<std::vector<errata::Erratum>, std::string> read_import(const fs::path& path,
                                                              const Config& config,
                                                              std::string& from, std::string& feed,
                                                              errata::FeedStamp& stamp) {
    const auto keys = service::trusted_keys(config);
    const auto policy = service::signature_policy(config);
    store::PackSignature sig;
    std::vector<errata::Erratum> out;
    if (is_pack_file(path)) {
        auto checked = store::open_checked_pack(path, keys, policy);
        if (checked.refused || checked.signature.state == store::SignatureState::invalid) {
            return fail("pack " + path.string() + " refused: " +
                        checked.refused.value_or("invalid signature: " + checked.signature.detail));
        }
        if (!checked.pack) {
            return fail(checked.error);
        }
        const std::string document = checked.pack->errata_document();
        auto carried = errata::of_pack_document(path, document);
        if (!carried) {
            return fail(carried.error().message);
        }
        if (!document.empty()) {
            auto stamped = errata::feed_stamp(document);
            if (!stamped) {
                return fail("pack " + path.string() + ": its errata: " + stamped.error().message);
            }
            stamp = *stamped;
        }
        sig = checked.signature;
        out = std::move(*carried);
    } else {
        auto file = errata::read_signed_file(path, keys, policy);
        if (!file) {
            return fail(file.error().message);
        }
        sig = file->signature;
        stamp = file->stamp;
        out = std::move(file->errata);
    }
    feed = sig.key_id ? store::key_id_hex(*sig.key_id) : "unsigned";
    from = "import " + path.string() +
           (sig.state == store::SignatureState::trusted
                ? " (trusted key " + store::key_id_hex(*sig.key_id) + ")"
                : " (" + std::string(store::to_string(sig.state)) + ")");
    return out;
}

int run_import(const ParsedArgs& args, const Config& config) {
    if (args.positionals().size() != 2) {
        return report(Exit::usage, "errata", "import needs FILE");
    }
    const fs::path in = args.positionals()[1];
    if (auto problem = input_file_problem(in)) {
        return report(problem->code, "errata", problem->message);
    }
    if (config.read_only) {
        return report(Exit::store_error, "errata", "the store is read-only (KCACHE_READONLY)");
    }
    std::string from;
    std::string feed;
    errata::FeedStamp stamp;
    auto errata_in = read_import(in, config, from, feed, stamp);
    if (!errata_in) {
        return report(Exit::action_needed, "errata", errata_in.error());
    }
    const std::time_t now = std::time(nullptr);
    const auto in_force = errata::feeds_in_force(config.dir);
    if (!in_force) {
        return report(Exit::store_error, "errata", in_force.error().message);
    }
    if (auto refused = errata::refusal(*in_force, feed, stamp, now)) {
        return report(Exit::action_needed, "errata", in.string() + " refused: " + *refused);
    }
    auto added = errata::add_local_from_feed(config.dir, *errata_in, from, feed, stamp, now);
    if (!added) {
        return report(Exit::store_error, "errata", added.error().message);
    }
    if (stamp.version) {
        from += ", version " + std::to_string(*stamp.version) + " of its feed";
    }
    std::cout << "imported " << errata_in->size() << " errata (" << *added
              << " new or changed): " << from << "\n";
    return 0;
}

int run_errata(const ParsedArgs& args) {
    const std::string action = args.positionals()[0];
    int code = 0;
    auto config = load_cli_config("errata", code);
    if (!config) {
        return code;
    }
    if (action != "list" && action != "export" && action != "import") {
        return report(Exit::usage, "errata",
                      "unknown action '" + action + "' (expected list, export or import)");
    }
    const std::vector<std::string> allowed =
        action == "list" ? std::vector<std::string>{"json"}
        : action == "export"
            ? std::vector<std::string>{"key", "unsigned", "pack", "version", "expires"}
            : std::vector<std::string>{};
    for (const char* option : {"json", "key", "unsigned", "pack", "version", "expires"}) {
        if (args.has(option) &&
            std::find(allowed.begin(), allowed.end(), option) == allowed.end()) {
            return report(Exit::usage, "errata",
                          "--" + std::string(option) + " is not an option of " + action);
        }
    }
    if (action == "list") {
        return args.positionals().size() == 1 ? run_list(args, *config)
                                              : report(Exit::usage, "errata", "list takes no file");
    }
    if (action == "export") {
        return run_export(args, *config);
    }
    return run_import(args, *config);
}

}  // namespace

std::vector<FeedLine> errata_feed_lines(const std::filesystem::path& store_dir) {
    auto feeds = errata::feeds_in_force(store_dir);
    if (!feeds) {
        return {{feeds.error().message, false, true}};
    }
    std::vector<FeedLine> out;
    const std::time_t now = std::time(nullptr);
    for (const errata::FeedInForce& f : *feeds) {
        FeedLine line;
        line.text = errata::describe(f, now, line.stale);
        out.push_back(std::move(line));
    }
    return out;
}

std::vector<errata::Erratum> applied_errata(std::string_view command, const Config& config,
                                            int& exit_code) {
    auto local = errata::load_local(config.dir);
    if (!local) {
        exit_code = report(Exit::store_error, command, local.error().message);
        return {};
    }
    std::vector<errata::Erratum> all = std::move(*local);
    const auto keys = service::trusted_keys(config);
    for (const fs::path& pack : service::runtime_pack_files(config)) {
        auto checked = store::open_checked_pack(pack, keys, service::signature_policy(config));
        if (!checked.pack) {
            continue;  // refused or unreadable: the runtime does not use it either
        }
        auto carried = errata::of_pack_document(pack, checked.pack->errata_document());
        if (!carried) {
            std::cerr << "kcache " << command << ": " << carried.error().message << "\n";
            continue;
        }
        for (errata::Erratum& e : *carried) {
            e.source = "pack " + pack.string();
        }
        errata::merge(all, *carried);
    }
    for (const canary::Record& r : canary::load_records(canary::canary_dir(config.dir))) {
        auto found = errata::from_record(r);
        for (errata::Erratum& e : found) {
            e.source = "canary";
        }
        errata::merge(all, found);
    }
    return all;
}

nlohmann::json covering_erratum(const Config& config, const device_db::DeviceIdentity& device,
                                const kernels::Variant& variant) {
    int code = 0;
    const auto all = applied_errata("explain", config, code);
    const errata::Erratum* e = errata::covering(all, canary::driver_identity(device), variant);
    if (e == nullptr) {
        return nullptr;
    }
    return {{"id", e->id()}, {"source", e->source}, {"erratum", e->describe()}};
}

void publish_findings(const Config& config, const std::vector<canary::Record>& records) {
    std::unique_ptr<remote::Client> client;
    for (const canary::Record& r : records) {
        const auto found = errata::from_record(r);
        if (found.empty() || config.remote_urls.empty()) {
            continue;
        }
        if (!client) {
            auto opened = service::open_remote(config);
            if (!opened) {
                std::cerr << "kcache: the canary's findings were not published: "
                          << opened.error().message << "\n";
                return;
            }
            client = std::move(*opened);
        }
        auto sent = errata::publish_remote(*client, r.identity, found);
        std::cerr << "kcache: "
                  << (sent ? "published " + std::to_string(found.size()) + " errata for " +
                                 r.identity.describe() + " to the remote tier"
                           : "the canary's findings on " + r.identity.describe() +
                                 " were not published: " + sent.error())
                  << "\n";
    }
}

Command errata_command() {
    return {{"errata",
             "list [--json] | export FILE [--key KEY | --unsigned] [--version N] "
             "[--expires UTC] | export --pack PACK [--key KEY] | import FILE",
             "list, export and import errata: drivers known to miscompile kernels",
             "An erratum names a vendor, device ids (or any), a driver version range, a\n"
             "kernel (and optionally one variant), the verdict 'suspect', the failing check\n"
             "and evidence. With KCACHE_CANARY=warn or enforce, a variant an erratum covers\n"
             "on the running driver is treated as a suspect canary verdict: enforce answers\n"
             "it driver_suspect, warn serves it with a logged warning.\n"
             "  list    the errata this node applies: imported or fetched from the remote\n"
             "          tier (<store>/errata/), carried by its packs, and its own canary's\n"
             "          suspect verdicts (<store>/canary/).\n"
             "  export  writes them to FILE (which must not exist) as JSON, signed with KEY,\n"
             "          else with KCACHE_REMOTE_SIGNING_KEY (as push signs), into\n"
             "          FILE.minisig; --unsigned writes no signature. With --pack, FILE is\n"
             "          an existing pack: the errata are written into it and the pack is\n"
             "          signed again with the key. --version N and --expires\n"
             "          YYYY-MM-DDTHH:MM:SSZ stamp FILE as publication N of the feed of its\n"
             "          key, stale after that time.\n"
             "  import  reads FILE (an errata file, or a pack: its errata) and keeps its\n"
             "          errata in <store>/errata/. Its signature (FILE.minisig, or the\n"
             "          pack's) is judged as packs' are: one that does not verify (the file\n"
             "          was altered) is refused; an unsigned file, or one signed by a key\n"
             "          that is not trusted, is refused under KCACHE_REQUIRE_SIGNED_PACKS.\n"
             "          A stamped document (a version, an expiry) older than the version\n"
             "          of its key's feed in force here (a replay) or expired is refused,\n"
             "          and the errata in force are kept; doctor shows each feed's version\n"
             "          and age (<store>/errata/feeds.json).\n",
             {{"json", Arity::flag, "", "list: print JSON"},
              {"key", Arity::value, "KEY", "export: the secret key to sign with"},
              {"unsigned", Arity::flag, "", "export: write no signature"},
              {"pack", Arity::flag, "", "export: FILE is a pack to write the errata into"},
              {"version", Arity::value, "N", "export: the feed's publication number (1 or more)"},
              {"expires", Arity::value, "UTC", "export: when the document is stale"}},
             1,
             2,
             std::string(kExitOk) +
                 "  1  import: the file was refused (signature, policy or contents)\n" +
                 kExitUsage + kExitNotFound +
                 "  4  the store or the file cannot be written, or the errata there are "
                 "damaged\n"},
            run_errata};
}

}  // namespace kcache::cli
