#pragma once
// The errata feed (docs/design.md, "Errata"): driver and kernel pairs known
// to compute wrong answers, published by a vendor, an operator or another
// node's driver canary. A variant an erratum covers on the running driver is
// treated as a canary `suspect` verdict (same policy, KCACHE_CANARY). Errata
// travel as a JSON document: a file signed like a pack (FILE.minisig beside
// it), a table of a pack (kcache/store/pack_errata.hpp), or a remote object
// per driver identity; this node keeps the ones it accepted in
// <store>/errata/errata.json (0700 directory, 0600 file, replaced atomically).
//
//   document = { "format": 1, "errata": [erratum…],
//                "version": uint64, "expires": UTC time }  (both optional:
//                                         the feed's order, errata_feed.hpp)
//   erratum  = { "vendor_id": uint32, "vendor": text,
//                "device_ids": [uint32…]   (empty: every device of the vendor),
//                "device": text            ("": any device name),
//                "driver_min": text, "driver_max": text
//                                          (inclusive version bounds; "": none),
//                "kernel": registry kernel name,
//                "variant": variant id     ("": every variant of the kernel),
//                "verdict": "suspect", "check": text, "evidence": text,
//                "source": text            (optional: where this node got it) }
//
// Every field is checked on read; a document with one bad erratum is refused
// whole, with the erratum's index and field named.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kcache/canary/canary.hpp"
#include "kcache/canary/errata_feed.hpp"
#include "kcache/canary/error.hpp"
#include "kcache/common/result.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/sign/signature.hpp"
#include "kcache/store/key.hpp"
#include "kcache/store/trust.hpp"

namespace kcache::remote {
class Client;
}

namespace kcache::errata {

struct Erratum {
    std::uint32_t vendor_id = 0;
    std::string vendor;
    std::vector<std::uint32_t> device_ids;
    std::string device;
    std::string driver_min;
    std::string driver_max;
    std::string kernel;
    std::string variant;
    std::string check;  // what failed ("result", "build", "timeout", …)
    std::string evidence;
    std::string source;

    // 16 hex digits over what the erratum covers (not its evidence): two
    // errata with the same id are one, the later replacing the earlier.
    std::string id() const;
    // Whether it covers the driver `driver` (vendor, device, version range).
    bool covers(const canary::DriverIdentity& driver) const;
    // Whether it covers `variant` on `driver`.
    bool covers(const canary::DriverIdentity& driver, const kernels::Variant& variant) const;
    // "dot on vendor 0x10006 devices any, drivers 3.0..3.9: result: …".
    std::string describe() const;
};

// Compares driver versions: runs of digits numerically, other runs as text,
// separators ('.', '-', '+', '_', ' ') skipped; a version that is a prefix
// of another is the smaller. <0, 0 or >0.
int compare_versions(std::string_view a, std::string_view b);

// The document's text (with `stamp`'s fields when given), and back (errors
// name the erratum and the field).
std::string to_json(const std::vector<Erratum>& errata, const FeedStamp& stamp = {});
Result<std::vector<Erratum>, canary::CanaryError> from_json(std::string_view text);

// Adds `more` to `into`, an erratum with the id of one there replacing it;
// returns how many of `more` were new or changed.
std::size_t merge(std::vector<Erratum>& into, const std::vector<Erratum>& more);

// The first erratum of `errata` that covers `variant` on `driver`, or nullptr.
const Erratum* covering(const std::vector<Erratum>& errata, const canary::DriverIdentity& driver,
                        const kernels::Variant& variant);

// One erratum per kernel with a suspect verdict in `record` (the canary's
// verdict covers its kernel's other variants), for exactly that driver.
std::vector<Erratum> from_record(const canary::Record& record);

// <store_dir>/errata.
std::filesystem::path errata_dir(const std::filesystem::path& store_dir);
// The errata this node accepted (none when there is no file); error: the
// file is unreadable or damaged (named, with the field).
Result<std::vector<Erratum>, canary::CanaryError> load_local(
    const std::filesystem::path& store_dir);
// Merges `errata` (their source set to `source`) into the node's file, under
// a lock shared by the node's processes; returns how many were new or changed.
Result<std::size_t, canary::CanaryError> add_local(const std::filesystem::path& store_dir,
                                                   std::vector<Erratum> errata,
                                                   const std::string& source);
// add_local for a document of `feed` stamped `stamp`, under the same lock:
// refused, nothing changed, when refusal() says why; else merged and, when
// it has a version, recorded as the feed's version in force.
Result<std::size_t, canary::CanaryError> add_local_from_feed(
    const std::filesystem::path& store_dir, std::vector<Erratum> errata, const std::string& source,
    const std::string& feed, const FeedStamp& stamp, std::time_t now);

// What reading a signed errata file found.
struct SignedFile {
    std::vector<Erratum> errata;
    FeedStamp stamp;
    store::PackSignature signature;  // the file's signature, as a pack's is judged
};

// Reads the errata file at `path` and judges FILE.minisig against `keys`
// under `policy` over one descriptor (the bytes checked are the bytes read):
// an invalid signature (the file or its comment altered) is refused under
// every policy, an unsigned file or one by an untrusted key under
// require_trusted; the error says why, naming the file.
Result<SignedFile, canary::CanaryError> read_signed_file(const std::filesystem::path& path,
                                                         const store::TrustedKeys& keys,
                                                         store::SignaturePolicy policy);
// Writes `errata` to `path` (which must not exist) and, with `key`, its
// signature FILE.minisig; error: why not (nothing is left half written).
Status<std::string> write_file(const std::filesystem::path& path,
                               const std::vector<Erratum>& errata, const store::SecretKey* key,
                               const FeedStamp& stamp = {});

// The errata `pack` carries (none when it carries none); error: a damaged
// document, naming the pack.
Result<std::vector<Erratum>, canary::CanaryError> of_pack_document(
    const std::filesystem::path& pack, const std::string& document);

// The remote tier holds one errata document per driver identity, as an
// object like any other (the client's get and put, its envelope, signature
// and breaker), under key fields no binary has (target format "errata").
store::KeyFields remote_fields(const canary::DriverIdentity& driver);
// The errata the remote holds for `driver` (none when it holds no object);
// error: the remote failed or its object was refused (the client's reason).
Result<std::vector<Erratum>, canary::CanaryError> fetch_remote(
    remote::Client& client, const canary::DriverIdentity& driver);
// Adds `errata` to the remote's document for `driver` (merged with what it
// holds) and uploads it now; error: why it was not published.
Status<std::string> publish_remote(remote::Client& client, const canary::DriverIdentity& driver,
                                   const std::vector<Erratum>& errata);

}  // namespace kcache::errata
