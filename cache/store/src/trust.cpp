// Trusted keys, the state of a pack's signature, and the signature policy.

#include "kcache/store/trust.hpp"

#include <algorithm>

namespace kcache::store {
namespace fs = std::filesystem;

TrustedKeys TrustedKeys::load(const std::vector<fs::path>& dirs,
                              const std::vector<fs::path>& files) {
    TrustedKeys out;
    std::vector<fs::path> paths;
    for (const fs::path& dir : dirs) {
        std::error_code ec;
        std::vector<fs::path> found;
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            if (e.path().extension() == ".pub") {
                found.push_back(e.path());
            }
        }
        std::sort(found.begin(), found.end());
        paths.insert(paths.end(), found.begin(), found.end());
    }
    paths.insert(paths.end(), files.begin(), files.end());
    for (const fs::path& p : paths) {
        auto key = read_public_key(p);
        if (key) {
            out.add({*key, p});
        } else {
            out.problems_.push_back(key.error().message);
        }
    }
    return out;
}

void TrustedKeys::add(TrustedKey key) {
    if (!find(key.key.id)) {
        keys_.push_back(std::move(key));
    }
}

const TrustedKey* TrustedKeys::find(const KeyId& id) const {
    for (const TrustedKey& k : keys_) {
        if (k.key.id == id) {
            return &k;
        }
    }
    return nullptr;
}

const char* to_string(SignatureState state) {
    switch (state) {
        case SignatureState::unsigned_pack:
            return "unsigned";
        case SignatureState::trusted:
            return "trusted";
        case SignatureState::untrusted_key:
            return "untrusted_key";
        case SignatureState::invalid:
            return "invalid";
    }
    return "unknown";
}

PackSignature check_pack_signature(const fs::path& pack, const TrustedKeys& keys) {
    PackSignature out;
    out.signature_file = signature_path(pack);
    std::error_code ec;
    if (fs::symlink_status(out.signature_file, ec).type() == fs::file_type::not_found) {
        out.detail = "no signature (" + out.signature_file.filename().string() + ")";
        return out;
    }
    auto invalid = [&](const SignError& e) {
        out.state = SignatureState::invalid;
        out.error = e.code;
        out.detail =
            e.code == SignErrc::malformed ? "malformed signature file " + e.message : e.message;
        return out;
    };
    auto sig = read_signature(out.signature_file);
    if (!sig) {
        return invalid(sig.error());
    }
    out.key_id = sig->key_id;
    out.trusted_comment = sig->trusted_comment;
    const TrustedKey* key = keys.find(sig->key_id);
    if (!key) {
        out.state = SignatureState::untrusted_key;
        out.detail = "signed by key " + key_id_hex(sig->key_id) +
                     ", which is not trusted (no .pub file with that key id in the trusted "
                     "key directories or KCACHE_TRUSTED_KEYS); the signature was not checked";
        return out;
    }
    if (auto ok = verify_file(pack, *sig, key->key); !ok) {
        return invalid(ok.error());
    }
    out.state = SignatureState::trusted;
    out.detail =
        "signed by trusted key " + key_id_hex(sig->key_id) + " (" + key->source.string() + ")";
    return out;
}

std::optional<std::string> refusal(const PackSignature& sig, SignaturePolicy policy) {
    if (policy == SignaturePolicy::report || sig.state == SignatureState::trusted) {
        return std::nullopt;
    }
    switch (sig.state) {
        case SignatureState::unsigned_pack:
            return "unsigned (" + sig.signature_file.filename().string() +
                   " is missing) and signed packs are required";
        case SignatureState::untrusted_key:
            return sig.detail;
        default:
            return "invalid signature: " + sig.detail;
    }
}

}  // namespace kcache::store
