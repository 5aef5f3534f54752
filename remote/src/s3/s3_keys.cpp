// The S3 backend's signing keys, read again when their credentials file
// changes or the server refuses them (s3.hpp, S3Keys).

#include "kcache/common/log.hpp"
#include "s3.hpp"

namespace kcache::remote {

S3Keys::S3Keys(const S3Settings& settings, S3Credentials first)
    : settings_(settings),
      keys_(std::move(first)),
      stamp_(keys_.file.empty() ? FileStamp{} : stamp_of(keys_.file)),
      region_(s3_region(settings)) {}

void S3Keys::read_locked() {
    const FileStamp stamp = stamp_of(keys_.file);
    auto again = find_s3_credentials(settings_);
    if (!again) {
        logging::warning(again.error().message + "; the S3 keys read before still sign");
        return;
    }
    stamp_ = stamp;
    keys_ = std::move(*again);
}

S3Keys::Now S3Keys::current() {
    std::lock_guard g(mu_);
    if (!keys_.file.empty() && stamp_of(keys_.file) != stamp_) {
        read_locked();
    }
    return Now{SigV4{region_, "s3", keys_.access_key_id, keys_.secret}, keys_.session_token};
}

bool S3Keys::refresh(const Now& refused) {
    std::lock_guard g(mu_);
    if (keys_.file.empty()) {
        return false;
    }
    read_locked();
    return keys_.access_key_id != refused.sig.access_key_id || keys_.secret != refused.sig.secret ||
           keys_.session_token != refused.session_token;
}

}  // namespace kcache::remote
