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
#include "kcache/sign/signature.hpp"
#include "kcache/store/pack.hpp"
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
    // that does not parse, or that others than root and the effective user
    // could replace (the rules of the store directory), is left out and
    // named in problems(); so is every file of such a directory. Two different keys under one key
    // id are both kept, and the collision is named in problems().
    static TrustedKeys load(const std::vector<std::filesystem::path>& dirs,
                            const std::vector<std::filesystem::path>& files);

    // Adds `key`; the same public key again is ignored, another key under the
    // same id is kept too and noted in problems().
    void add(TrustedKey key);
    // The first trusted key with id `id`, or nullptr.
    const TrustedKey* find(const KeyId& id) const;
    // Every trusted key with id `id` (more than one only after a collision).
    std::vector<const TrustedKey*> matching(const KeyId& id) const;
    const std::vector<TrustedKey>& keys() const { return keys_; }
    // "path: what is wrong", one per key file or directory that could not be
    // used, and one per key id that two different keys carry.
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
    bool key_trusted = false;       // a trusted key carries key_id (its signature was checked)
    std::string trusted_comment;    // when the .minisig parsed (verified only if trusted)
    std::optional<SignErrc> error;  // why it is invalid
    std::string detail;             // for people: why it is not trusted
    std::string unsafe_location;    // why others could replace the pack; empty when none can
};

// Checks where the pack at `pack` lies (the store directory's rules) and the
// signature beside it against `keys`, over one descriptor of the pack. Never
// fails: a problem is an `invalid` state whose detail names the cause.
PackSignature check_pack_signature(const std::filesystem::path& pack, const TrustedKeys& keys);
// The same over `fd`, a descriptor of the pack named `pack` that the caller
// goes on to read (Pack::open(int, path)); -1 when it could not be opened.
PackSignature check_pack_signature(int fd, const std::filesystem::path& pack,
                                   const TrustedKeys& keys);

// Whether packs must carry a trusted signature to be used.
enum class SignaturePolicy {
    report,           // use every pack; an invalid signature is reported, never taken as valid
    require_trusted,  // use only packs signed by a trusted key whose signatures verify
};

// Why `policy` refuses a pack whose signature is `sig` (one sentence naming
// the cause); nullopt when the pack may be used. A pack in an unsafe
// location is refused under every policy.
std::optional<std::string> refusal(const PackSignature& sig, SignaturePolicy policy);

// A pack as the policy judged it: opened once, its location and signature
// checked over that descriptor, and, when admitted, read through the same
// descriptor (Pack::open(int, path)), so that renaming another file over the
// path after the check changes nothing.
struct CheckedPack {
    PackSignature signature;
    std::optional<std::string> refused;  // refusal(signature, policy)
    std::optional<Pack> pack;            // when admitted and it opened as a pack
    std::string error;                   // when admitted but it did not open
};

// Opens the pack at `path` under `policy`; never fails (see CheckedPack).
CheckedPack open_checked_pack(const std::filesystem::path& path, const TrustedKeys& keys,
                              SignaturePolicy policy);

// The trusted comment kcache writes for the pack at `pack`: schema version,
// producers, compiler identities (ocloc, or the driver for JIT entries),
// creation time and file name, tab-separated `name:value` as minisign's own.
Result<std::string, StoreError> pack_trusted_comment(const std::filesystem::path& pack);

// Signs the pack at `pack` with `key` and writes (or replaces) PACK.minisig;
// returns the signature written. The pack must open as a pack (else the
// error of opening it); a failure to sign or to write the signature is `io`.
Result<Signature, StoreError> sign_pack(const std::filesystem::path& pack, const SecretKey& key);

}  // namespace kcache::store
