#pragma once
// A SourceRequest's own known-answer test at run time (SourceRequest::kat,
// docs/canary-kat.md): before the program the ladder answered is served,
// the caller's KAT file runs on its binary in kcache-verify under the
// watchdog (canary::run_caller_kat), once per store, binary key and test,
// and Config::canary decides what a suspect verdict gets, as for the
// registry kernels (canary_gate.hpp). Verdicts are kept in the process (a
// repeat request reads no file) and under the store, in the canary's record
// format (canary.hpp) with one verdict named after the request:
//
//   <store>/canary/kat/<test id>/<identity id>.json
//   test id = the first 16 hex digits of SHA-256(key hex "\n" ("file" |
//             "reference") "\n" KAT file bytes)
//
// so that a later process reads the verdict instead of running the test
// again; a changed KAT file is a new test. Verdicts of a test that did not
// run are kept for the process only.

#include <concepts>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/kcache_types.hpp"
#include "kcache/opencl.h"

namespace kcache::service {

// A call of one member function of an object of the caller's, bound by
// reference (the object outlives it) without naming the object's type.
template <class R, class Arg>
class BoundCall {
  public:
    R operator()(Arg arg) const { return call_(object_, arg); }

  protected:
    BoundCall(void* object, R (*call)(void*, Arg)) noexcept : object_(object), call_(call) {}

  private:
    void* object_;
    R (*call_)(void*, Arg);
};

using IdentityResult = Result<std::shared_ptr<const device_db::DeviceIdentity>, std::string>;
using BinaryResult = Result<std::vector<std::uint8_t>, std::string>;

// What the test reads of the caller's parts, which the service (the
// composition root) hands in, so that canary includes none of its headers:
// a device's identity as its device facts keep it (an object with
// `of(cl_device_id)`: the service's Identities), and a built program's
// binary (an object with `binary_of(cl_program)`: its Loader, whose typed
// error's message is kept).
struct IdentityOf : BoundCall<IdentityResult, cl_device_id> {
    template <class Identities>
    requires requires(Identities& i, cl_device_id d) {
        { i.of(d) } -> std::convertible_to<IdentityResult>;
    }
    IdentityOf(Identities& identities) noexcept  // implicit: KatServed{…, identities, …}
        : BoundCall(&identities, [](void* o, cl_device_id d) -> IdentityResult {
              return static_cast<Identities*>(o)->of(d);
          }) {}
};
struct BinaryOf : BoundCall<BinaryResult, cl_program> {
    template <class Loader>
    requires requires(Loader& l, cl_program p) {
        { *l.binary_of(p) } -> std::convertible_to<std::vector<std::uint8_t>>;
        { l.binary_of(p).error().message } -> std::convertible_to<std::string>;
    }
    BinaryOf(Loader& loader) noexcept  // implicit: KatServed{…, loader}
        : BoundCall(&loader, [](void* o, cl_program p) -> BinaryResult {
              auto binary = static_cast<Loader*>(o)->binary_of(p);
              if (!binary) {
                  return fail(binary.error().message);
              }
              return std::move(*binary);
          }) {}
};

// The program a request's test is about.
struct KatServed {
    const std::string& key_hex;  // its binary's key (Outcome::key)
    cl_device_id device;
    cl_program program;
    IdentityOf identity_of;
    BinaryOf binary_of;
};

// What `request` may do with `served` under `config.canary`: ok (off; the
// test validated; or it found the driver suspect or could not run, under
// warn, with one logged warning per test in the process), driver_suspect
// with the verdict in the message (a suspect verdict under enforce),
// invalid_argument (a KAT file that cannot be read or parsed, a reference
// that fails, a reference without a KAT file) or device_error.
Outcome caller_kat_gate(const Config& config, const SourceRequest& request,
                        const KatServed& served);

// `kat_text` with each output argument's "expected" list replaced by what
// `reference` computes from the file's inputs (KatReference's contract);
// error: why not (the file is not JSON or an argument is malformed, named by
// its path; the reference failed, threw, resized an output or gave a value
// that is not finite).
Result<std::string, std::string> kat_with_reference(const std::string& kat_text,
                                                    const KatReference& reference);

// A KAT file written for one run of kcache-verify (mode 0600 in `dir`),
// removed with the object.
class KatTempFile {
  public:
    // Error: why the file could not be written.
    static Result<KatTempFile, std::string> write(const std::filesystem::path& dir,
                                                  const std::string& text);
    KatTempFile(KatTempFile&& o) noexcept : path_(std::exchange(o.path_, {})) {}
    KatTempFile& operator=(KatTempFile&&) = delete;
    KatTempFile(const KatTempFile&) = delete;
    ~KatTempFile();
    const std::filesystem::path& path() const noexcept { return path_; }

  private:
    explicit KatTempFile(std::filesystem::path path) : path_(std::move(path)) {}
    std::filesystem::path path_;
};

}  // namespace kcache::service
