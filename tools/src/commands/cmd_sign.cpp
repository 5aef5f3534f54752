// kcache keygen and sign: minisign-format key pairs and pack signatures
// (kcache/sign/signature.hpp), which Debian's `minisign -V` verifies.

#include <iostream>

#include "cli.hpp"
#include "kcache/canary/pack_trust.hpp"
#include "kcache/store/pack.hpp"
#include "kcache/store/trust.hpp"
#include "signing.hpp"

namespace kcache::cli {
namespace fs = std::filesystem;
namespace {

int run_keygen(const ParsedArgs& args) {
    const std::string base = *args.value("output");
    const fs::path secret = base + ".key";
    const fs::path pub = base + ".pub";
    std::error_code ec;
    for (const fs::path& p : {secret, pub}) {
        if (fs::symlink_status(p, ec).type() != fs::file_type::not_found) {
            return report(Exit::usage, "keygen", p.string() + " already exists; remove it first");
        }
    }
    auto key = store::generate_key();
    if (!key) {
        return report(Exit::action_needed, "keygen", key.error().message);
    }
    auto written =
        store::write_text_file(secret, store::format_secret_key(*key), 0600, store::Replace::no);
    if (written) {
        written = store::write_text_file(pub, store::format_public_key(key->public_key()), 0644,
                                         store::Replace::no);
        if (!written) {
            fs::remove(secret, ec);  // no secret key without its public half
        }
    }
    if (!written) {
        return report(Exit::action_needed, "keygen", written.error().message);
    }
    std::cout << "key id " << store::key_id_hex(key->id) << "\n"
              << "wrote " << secret.string() << " (secret, mode 0600, unencrypted) and "
              << pub.string() << "\n"
              << "trust it with: cp " << pub.string()
              << " /etc/kcache/trusted.d/ (or $XDG_CONFIG_HOME/kcache/trusted.d/),\n"
              << "or KCACHE_TRUSTED_KEYS=" << pub.string() << "\n";
    return 0;
}

int run_sign(const ParsedArgs& args) {
    const fs::path pack = args.positionals()[0];
    std::error_code ec;
    if (!fs::is_regular_file(pack, ec)) {
        return fs::exists(pack, ec)
                   ? report(Exit::usage, "sign", pack.string() + ": not a regular file")
                   : report(Exit::not_found, "sign", "no such pack: " + pack.string());
    }
    int code = 0;
    auto key = load_signing_key("sign", *args.value("key"), code);
    return key ? sign_written_pack("sign", pack, *key) : code;
}

}  // namespace

std::optional<store::SecretKey> load_signing_key(std::string_view command, const fs::path& path,
                                                 int& exit_code) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        exit_code = report(Exit::not_found, command, "no such key file: " + path.string());
        return std::nullopt;
    }
    auto key = store::read_secret_key(path);
    if (!key) {
        exit_code = report(Exit::usage, command, "cannot use the key: " + key.error().message);
        return std::nullopt;
    }
    return *key;
}

int sign_written_pack(std::string_view command, const fs::path& pack, const store::SecretKey& key) {
    auto sig = store::sign_pack(pack, key);
    if (!sig) {
        return report(Exit::store_error, command,
                      "cannot sign " + pack.string() + ": " + sig.error().message);
    }
    std::cout << "signed " << pack.string() << " with key " << store::key_id_hex(key.id) << ": "
              << store::signature_path(pack).string() << "\n"
              << "trusted comment: " << sig->trusted_comment << "\n";
    return 0;
}

nlohmann::json report_pack_signature(int fd, const fs::path& pack, const Config& config,
                                     bool as_json, bool& needs_action) {
    const auto keys = service::trusted_keys(config);
    const auto sig = store::check_pack_signature(fd, pack, keys);
    const auto refused = store::refusal(sig, service::signature_policy(config));
    needs_action = sig.state == store::SignatureState::invalid || refused.has_value();
    nlohmann::json j{{"state", store::to_string(sig.state)},
                     {"trusted", sig.state == store::SignatureState::trusted},
                     {"detail", sig.detail},
                     {"used_by_runtime", !refused.has_value()}};
    if (!sig.unsafe_location.empty()) {
        j["unsafe_location"] = sig.unsafe_location;
    }
    if (sig.key_id) {
        j["key_id"] = store::key_id_hex(*sig.key_id);
        j["trusted_comment"] = sig.trusted_comment;
    }
    if (refused) {
        j["refusal"] = *refused;
    }
    if (as_json) {
        return j;
    }
    std::cout << "signature: " << store::to_string(sig.state);
    if (sig.key_id) {
        std::cout << ", key " << store::key_id_hex(*sig.key_id)
                  << (sig.state == store::SignatureState::trusted ? " (trusted)"
                      : sig.key_trusted ? " (trusted key; the signature does not verify)"
                                        : " (not trusted)");
    }
    std::cout << "\n  " << sig.detail << "\n";
    if (!sig.unsafe_location.empty()) {
        std::cout << "location: unsafe: " << sig.unsafe_location << "\n";
    }
    if (sig.key_id) {
        std::cout << "trusted comment"
                  << (sig.state == store::SignatureState::trusted ? "" : " (unverified)") << ": "
                  << sig.trusted_comment << "\n";
    }
    if (refused) {
        std::cout << "the runtime does not use this pack: " << *refused << "\n";
    }
    return j;
}

Command keygen_command() {
    return {{"keygen",
             "--output NAME",
             "make a key pair for signing packs (minisign format)",
             "Writes NAME.key (the secret key, mode 0600, unencrypted: keep it private) and\n"
             "NAME.pub (the public key) in minisign's formats: `minisign -S -s NAME.key`\n"
             "signs with it and `minisign -V -p NAME.pub` verifies. Neither file may exist.\n"
             "Packs signed with the key are trusted where NAME.pub is in\n"
             "/etc/kcache/trusted.d/, $XDG_CONFIG_HOME/kcache/trusted.d/ or KCACHE_TRUSTED_KEYS.\n",
             {{"output", Arity::value, "NAME", "write NAME.key and NAME.pub"}},
             0,
             0,
             std::string(kExitOk) + "  1  the key files could not be written\n" + kExitUsage},
            [](const ParsedArgs& a) {
                return a.has("output") ? run_keygen(a)
                                       : report(Exit::usage, "keygen", "--output NAME is required");
            }};
}

Command sign_command() {
    return {
        {"sign",
         "PACK --key KEY",
         "sign a pack: writes PACK.minisig (minisign format)",
         "The signature is Ed25519 over the BLAKE2b-512 hash of the pack (minisign's\n"
         "\"ED\" algorithm); `minisign -Vm PACK -p KEY.pub` verifies it. Its trusted\n"
         "comment names the pack's schema version, producers, compiler identities\n"
         "(ocloc, or the driver), creation time and file name. KEY is an unencrypted\n"
         "secret key: from `kcache keygen` or `minisign -G -W`. An existing\n"
         "PACK.minisig is replaced.\n",
         {{"key", Arity::value, "KEY", "the secret key file"}},
         1,
         1,
         std::string(kExitOk) + "  2  usage error, or KEY is not an unencrypted secret key\n" +
             kExitNotFound + "  4  the pack is malformed, or the signature cannot be written\n"},
        [](const ParsedArgs& a) {
            return a.has("key") ? run_sign(a)
                                : report(Exit::usage, "sign", "--key KEY is required");
        }};
}

}  // namespace kcache::cli
