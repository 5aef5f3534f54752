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

#include <filesystem>
#include <string>

#include "identities.hpp"
#include "kcache/common/result.hpp"
#include "kcache/service/loader.hpp"
#include "kcache/service/service_api.hpp"

namespace kcache::service {

// The program a request's test is about.
struct KatServed {
    const std::string& key_hex;  // its binary's key (Outcome::key)
    cl_device_id device;
    cl_program program;
    Identities& identities;
    Loader& loader;
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
