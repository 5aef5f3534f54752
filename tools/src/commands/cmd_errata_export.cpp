// kcache errata export: the errata this node applies written to a file
// (signed, optionally stamped as a publication of a feed) or into a pack.

#include <unistd.h>

#include <iostream>

#include "cli.hpp"
#include "kcache/canary/errata.hpp"
#include "kcache/store/pack_errata.hpp"
#include "kcache/store/trust.hpp"
#include "reports/errata_export.hpp"
#include "reports/errata_report.hpp"
#include "signing.hpp"

namespace kcache::cli {
namespace fs = std::filesystem;
namespace {

// The key export signs with: --key, else the configured remote signing key
// (as push signs); none with --unsigned.
std::optional<std::optional<store::SecretKey>> export_key(const ParsedArgs& args,
                                                          const Config& config, int& exit_code) {
    if (auto both = args.exclusive({"key", "unsigned"}); !both) {
        exit_code = report(Exit::usage, "errata", both.error().message);
        return std::nullopt;
    }
    const fs::path path =
        args.value("key") ? fs::path(*args.value("key")) : config.remote_signing_key;
    if (args.has("unsigned")) {
        return std::optional<store::SecretKey>();
    }
    if (path.empty()) {
        exit_code = report(Exit::usage, "errata",
                           "no signing key: give --key KEY or set KCACHE_REMOTE_SIGNING_KEY "
                           "(or --unsigned for an unsigned file)");
        return std::nullopt;
    }
    auto key = load_signing_key("errata", path, exit_code);
    if (!key) {
        return std::nullopt;
    }
    return std::optional<store::SecretKey>(*key);
}

// Writes `all` into the pack at `pack` (a copy, renamed over it) and signs it.
int export_into_pack(const fs::path& pack, const std::vector<errata::Erratum>& all,
                     const store::SecretKey& key) {
    if (auto problem = input_file_problem(pack)) {
        return report(problem->code, "errata", problem->message);
    }
    const fs::path tmp = pack.string() + ".errata-" + std::to_string(::getpid());
    std::error_code ec;
    fs::copy_file(pack, tmp, fs::copy_options::overwrite_existing, ec);
    auto written = ec ? Status<store::StoreError>(fail(store::StoreError{
                            store::StoreErrc::io, tmp.string() + ": " + ec.message()}))
                      : store::write_pack_errata(tmp, errata::to_json(all));
    if (written) {
        fs::rename(tmp, pack, ec);  // readers of the old pack keep reading it
    }
    if (!written || ec) {
        fs::remove(tmp, ec);
        return report(Exit::store_error, "errata",
                      written ? pack.string() + ": cannot be replaced"
                              : "cannot write the errata into " + pack.string() + ": " +
                                    written.error().message);
    }
    std::cout << "wrote " << all.size() << " errata into " << pack.string() << "\n";
    return sign_written_pack("errata", pack, key);
}

// --version and --expires of export; nullopt after reporting a bad one.
std::optional<errata::FeedStamp> export_stamp(const ParsedArgs& args, int& exit_code) {
    errata::FeedStamp stamp;
    if (auto v = args.value("version")) {
        const bool digits = !v->empty() && v->size() <= 19 &&
                            v->find_first_not_of("0123456789") == std::string::npos;
        if (!digits || std::stoull(*v) == 0) {
            exit_code = report(Exit::usage, "errata",
                               "--version '" + *v + "': expected a whole number of at least 1");
            return std::nullopt;
        }
        stamp.version = std::stoull(*v);
    }
    if (auto e = args.value("expires")) {
        stamp.expires = errata::parse_utc(*e);
        if (!stamp.expires) {
            exit_code = report(Exit::usage, "errata",
                               "--expires '" + *e +
                                   "': expected a UTC time as "
                                   "YYYY-MM-DDTHH:MM:SSZ");
            return std::nullopt;
        }
    }
    if (args.has("pack") && (stamp.version || stamp.expires)) {
        exit_code =
            report(Exit::usage, "errata", "--version and --expires stamp a FILE, not --pack");
        return std::nullopt;
    }
    return stamp;
}

}  // namespace

int run_export(const ParsedArgs& args, const Config& config) {
    if (args.positionals().size() != 2) {
        return report(Exit::usage, "errata", "export needs FILE (or --pack PACK)");
    }
    int stamp_code = 0;
    const auto stamp = export_stamp(args, stamp_code);
    if (!stamp) {
        return stamp_code;
    }
    const fs::path out = args.positionals()[1];
    int code = 0;
    const auto key = export_key(args, config, code);
    if (!key) {
        return code;
    }
    const auto all = applied_errata("errata", config, code);
    if (code != 0) {
        return code;
    }
    if (args.has("pack")) {
        if (!key->has_value()) {
            return report(Exit::usage, "errata",
                          "--pack re-signs the pack: it needs a signing key, not --unsigned");
        }
        return export_into_pack(out, all, **key);
    }
    if (auto problem = new_output_problem(out)) {
        return report(problem->code, "errata", problem->message);
    }
    std::error_code ec;
    if (!key->has_value() &&
        fs::symlink_status(store::signature_path(out), ec).type() != fs::file_type::not_found) {
        return report(Exit::usage, "errata",
                      store::signature_path(out).string() +
                          " exists (another file's signature); remove it first");
    }
    if (auto written = errata::write_file(out, all, key->has_value() ? &**key : nullptr, *stamp);
        !written) {
        return report(Exit::store_error, "errata", written.error());
    }
    std::cout << "exported " << all.size() << " errata to " << out.string();
    if (key->has_value()) {
        std::cout << ", signed with key " << store::key_id_hex((*key)->id) << " ("
                  << store::signature_path(out).string() << ")\n";
    } else {
        std::cout << ", unsigned\n";
    }
    return 0;
}

}  // namespace kcache::cli
