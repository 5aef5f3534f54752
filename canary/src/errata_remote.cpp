// Errata on the remote tier: one document per driver identity, fetched and
// uploaded through the client like any object (envelope, signature, breaker).

#include "kcache/canary/errata.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/store/pack_errata.hpp"

namespace kcache::errata {
using canary::CanaryErrc;
using canary::CanaryError;

store::KeyFields remote_fields(const canary::DriverIdentity& d) {
    store::KeyFields f;
    f.kernel_name = "kcache-errata";
    f.source_digest = sha256_hex("kcache errata document, format 1");
    f.target_format = "errata";
    f.vendor_id = d.vendor_id;
    f.device_name = d.device;
    f.pci_device_id = d.device_id;
    f.driver_version = d.driver;
    f.platform_name = d.platform;
    f.compiler_id = d.compiler;
    return f;
}

Result<std::vector<Erratum>, CanaryError> fetch_remote(remote::Client& client,
                                                       const canary::DriverIdentity& driver) {
    auto fetched = client.fetch(remote_fields(driver));
    if (!fetched) {
        if (fetched.error().code == remote::RemoteErrc::not_found) {
            return std::vector<Erratum>();
        }
        return fail(CanaryError{CanaryErrc::remote, fetched.error().message});
    }
    if (fetched->bytes.size() > store::kMaxPackErrataBytes) {
        return fail(
            CanaryError{CanaryErrc::damaged,
                        "the remote's errata for " + driver.describe() + " are larger than " +
                            std::to_string(store::kMaxPackErrataBytes) + " bytes; not used"});
    }
    const std::string text(fetched->bytes.begin(), fetched->bytes.end());
    auto errata = from_json(text);
    if (!errata) {
        return fail(CanaryError{
            CanaryErrc::damaged,
            "the remote's errata for " + driver.describe() + ": " + errata.error().message});
    }
    return std::move(*errata);
}

Status<std::string> publish_remote(remote::Client& client, const canary::DriverIdentity& driver,
                                   const std::vector<Erratum>& errata) {
    if (auto why = client.why_no_uploads()) {
        return fail(*why);
    }
    auto held = fetch_remote(client, driver);
    if (!held) {
        return fail(held.error().message);
    }
    if (merge(*held, errata) == 0) {
        return Ok{};  // the remote has them already
    }
    for (Erratum& e : *held) {
        e.source.clear();
    }
    const std::string text = to_json(*held);
    store::Provenance provenance;
    provenance.producer_version = "kcache " KCACHE_VERSION;
    provenance.origin = store::Origin::imported;
    auto sent = client.upload(remote_fields(driver),
                              {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()},
                              provenance);
    if (!sent) {
        return fail(sent.error().message);
    }
    return Ok{};
}

}  // namespace kcache::errata
