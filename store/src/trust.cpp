// Trusted keys, the state of a pack's signature, and the signature policy.

#include "kcache/store/trust.hpp"

#include <algorithm>

#include "kcache/common/read_file.hpp"
#include "path_rules.hpp"

namespace kcache::store {
namespace fs = std::filesystem;
namespace {

// The *.pub files of `dir`, sorted; a directory others could write is not read.
std::vector<fs::path> key_files_of(const fs::path& dir, std::vector<std::string>& problems) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
        return {};
    }
    if (auto why = files::unsafe_location(dir, files::Location::directory)) {
        problems.push_back("trusted key directory " + *why + "; none of its keys is trusted");
        return {};
    }
    std::vector<fs::path> found;
    // Advanced with an error code: a directory that fails mid-listing ends
    // the listing instead of throwing.
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == ".pub") {
            found.push_back(it->path());
        }
    }
    if (ec) {
        problems.push_back("trusted key directory " + dir.string() + ": " + ec.message());
    }
    std::sort(found.begin(), found.end());
    return found;
}

}  // namespace

TrustedKeys TrustedKeys::load(const std::vector<fs::path>& dirs,
                              const std::vector<fs::path>& files) {
    TrustedKeys out;
    std::vector<fs::path> paths;
    for (const fs::path& dir : dirs) {
        const auto found = key_files_of(dir, out.problems_);
        paths.insert(paths.end(), found.begin(), found.end());
    }
    paths.insert(paths.end(), files.begin(), files.end());
    for (const fs::path& p : paths) {
        if (auto why = files::unsafe_location(p, files::Location::file)) {
            out.problems_.push_back(*why + " (not trusted)");
            continue;
        }
        auto key = read_public_key(p);
        if (key) {
            out.add({*key, p});
        } else {
            out.problems_.push_back(key.error().message + " (not trusted)");
        }
    }
    return out;
}

void TrustedKeys::add(TrustedKey key) {
    const auto same_id = matching(key.key.id);
    for (const TrustedKey* k : same_id) {
        if (k->key.key == key.key.key) {
            return;  // the same key from another file
        }
    }
    if (!same_id.empty()) {
        problems_.push_back("key id " + key_id_hex(key.key.id) +
                            " is carried by two different keys (" +
                            same_id.front()->source.string() + " and " + key.source.string() +
                            "): a signature is checked against each");
    }
    keys_.push_back(std::move(key));
}

const TrustedKey* TrustedKeys::find(const KeyId& id) const {
    const auto all = matching(id);
    return all.empty() ? nullptr : all.front();
}

std::vector<const TrustedKey*> TrustedKeys::matching(const KeyId& id) const {
    std::vector<const TrustedKey*> out;
    for (const TrustedKey& k : keys_) {
        if (k.key.id == id) {
            out.push_back(&k);
        }
    }
    return out;
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

namespace {

// What failed when the signature by trusted key `id` did not verify.
std::string not_verified(const KeyId& id, const SignError& e) {
    const std::string by = "signature by trusted key " + key_id_hex(id) + " does not verify: ";
    switch (e.code) {
        case SignErrc::altered_content:
            return by + "the pack was changed after signing (" + e.message + ")";
        case SignErrc::altered_comment:
            return by + "its trusted comment was edited after signing";
        default:
            return by + e.message;
    }
}

// The signature of the pack open at `fd` (-1 when it could not be opened:
// `open_error` says why) named `pack`, checked against every trusted key
// with its key id.
PackSignature check_signature(const fs::path& pack, int fd, const std::string& open_error,
                              const TrustedKeys& keys) {
    PackSignature out;
    out.signature_file = signature_path(pack);
    std::error_code ec;
    if (fs::symlink_status(out.signature_file, ec).type() == fs::file_type::not_found) {
        out.detail = "no signature (" + out.signature_file.filename().string() + ")";
        return out;
    }
    auto invalid = [&](const SignError& e, std::string detail) {
        out.state = SignatureState::invalid;
        out.error = e.code;
        out.detail = std::move(detail);
        return out;
    };
    auto sig = read_signature(out.signature_file);
    if (!sig) {
        const SignError& e = sig.error();
        return invalid(
            e, e.code == SignErrc::malformed ? "malformed signature file " + e.message : e.message);
    }
    out.key_id = sig->key_id;
    out.trusted_comment = sig->trusted_comment;
    const auto candidates = keys.matching(sig->key_id);
    if (candidates.empty()) {
        out.state = SignatureState::untrusted_key;
        out.detail = "signed by key " + key_id_hex(sig->key_id) +
                     ", which is not trusted (no .pub file with that key id in the trusted "
                     "key directories or KCACHE_TRUSTED_KEYS); the signature was not checked";
        return out;
    }
    out.key_trusted = true;
    if (fd < 0) {
        return invalid(
            SignError{SignErrc::io, open_error},
            "signature by trusted key " + key_id_hex(sig->key_id) + " not checked: " + open_error);
    }
    std::optional<SignError> first;
    for (const TrustedKey* key : candidates) {
        auto ok = verify_descriptor(fd, pack.string(), *sig, key->key);
        if (ok) {
            out.state = SignatureState::trusted;
            out.detail = "signed by trusted key " + key_id_hex(sig->key_id) + " (" +
                         key->source.string() + ")";
            return out;
        }
        first = first ? first : ok.error();
    }
    return invalid(*first, not_verified(sig->key_id, *first));
}

// `check` with the location's verdict added.
PackSignature with_location(PackSignature check, const fs::path& pack) {
    if (auto why = files::unsafe_location(pack, files::Location::file)) {
        check.unsafe_location = *why;
    }
    return check;
}

}  // namespace

PackSignature check_pack_signature(const fs::path& pack, const TrustedKeys& keys) {
    auto fd = open_regular_file(pack);
    return with_location(
        check_signature(pack, fd ? fd->get() : -1, fd ? "" : fd.error().message, keys), pack);
}

PackSignature check_pack_signature(int fd, const fs::path& pack, const TrustedKeys& keys) {
    return with_location(check_signature(pack, fd, pack.string() + ": cannot be read", keys), pack);
}

CheckedPack open_checked_pack(const fs::path& path, const TrustedKeys& keys,
                              SignaturePolicy policy) {
    CheckedPack out;
    auto fd = open_regular_file(path);
    out.signature =
        fd ? check_pack_signature(fd->get(), path, keys) : check_pack_signature(path, keys);
    out.refused = refusal(out.signature, policy);
    if (out.refused) {
        return out;
    }
    if (!fd) {
        out.error = fd.error().message;
        return out;
    }
    auto pack = Pack::open(fd->get(), path);  // the very file whose signature was checked
    if (pack) {
        out.pack = std::move(*pack);
    } else {
        out.error = pack.error().message;
    }
    return out;
}

std::optional<std::string> refusal(const PackSignature& sig, SignaturePolicy policy) {
    if (!sig.unsafe_location.empty()) {
        return "in an unsafe location: " + sig.unsafe_location +
               " (move it where only root or you can write)";
    }
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
