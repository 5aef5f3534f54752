#pragma once
// Trust in signed packs: the set of trusted public keys, the state of a
// pack's signature (`PACK.minisig` beside it), and the policy that decides
// whether a pack may be used. Shared by the runtime, `import`, `verify`,
// `doctor` and `devices`, so that all of them give the same reasons.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/store/signature.hpp"
#include "kcache/store/types.hpp"

namespace kcache::store {

struct TrustedKey {
    PublicKey key;
    std::filesystem::path source;  // the .pub file it was read from
};

// The public keys whose signatures are trusted, and why others were not loaded.
class TrustedKeys {
  public:
    // Reads every *.pub file of each directory of `dirs` (a missing directory
    // is fine) and every file of `files` (a missing one is a problem). A file
    // that does not parse is left out and named in problems().
    static TrustedKeys load(const std::vector<std::filesystem::path>& dirs,
                            const std::vector<std::filesystem::path>& files);

    // Adds `key` (a second key with the same id is ignored).
    void add(TrustedKey key);
    // The trusted key with id `id`, or nullptr.
    const TrustedKey* find(const KeyId& id) const;
    const std::vector<TrustedKey>& keys() const { return keys_; }
    // "path: what is wrong", one per key file that could not be used.
    const std::vector<std::string>& problems() const { return problems_; }

  private:
    std::vector<TrustedKey> keys_;
    std::vector<std::string> problems_;
};

// What is known about a pack's signature.
enum class SignatureState {
    unsigned_pack,  // no PACK.minisig
    trusted,        // signed by a trusted key, and both signatures verify
    untrusted_key,  // signed by a key that is not trusted (so not verified)
    invalid,        // a malformed or unreadable .minisig, or a signature that does not verify
};

// "unsigned", "trusted", "untrusted_key", "invalid".
const char* to_string(SignatureState state);

struct PackSignature {
    SignatureState state = SignatureState::unsigned_pack;
    std::filesystem::path signature_file;
    std::optional<KeyId> key_id;    // when the .minisig parsed
    std::string trusted_comment;    // when the .minisig parsed (verified only if trusted)
    std::optional<SignErrc> error;  // why it is invalid
    std::string detail;             // for people: why it is not trusted
};

// Checks the signature beside `pack` against `keys`. Never fails: a problem
// is an `invalid` state whose detail names the cause.
PackSignature check_pack_signature(const std::filesystem::path& pack, const TrustedKeys& keys);

// Whether packs must carry a trusted signature to be used.
enum class SignaturePolicy {
    report,           // use every pack; an invalid signature is reported, never taken as valid
    require_trusted,  // use only packs signed by a trusted key whose signatures verify
};

// Why `policy` refuses a pack whose signature is `sig` (one sentence naming
// the cause); nullopt when the pack may be used.
std::optional<std::string> refusal(const PackSignature& sig, SignaturePolicy policy);

// The trusted comment kcache writes for the pack at `pack`: schema version,
// producers, compiler identities (ocloc, or the driver for JIT entries),
// creation time and file name, tab-separated `name:value` as minisign's own.
Result<std::string, StoreError> pack_trusted_comment(const std::filesystem::path& pack);

// Signs the pack at `pack` with `key` and writes (or replaces) PACK.minisig;
// returns the signature written. The pack must open as a pack.
Result<Signature, std::string> sign_pack(const std::filesystem::path& pack, const SecretKey& key);

}  // namespace kcache::store
