// What the remote ladder's tests share (remote_ladder.hpp).

#include "remote_ladder.hpp"

#include "remote_support.hpp"

namespace kcache::test {

std::string miss_of(const Outcome& o, Rung rung) {
    for (const auto& m : o.misses) {
        if (m.rung == rung) {
            return m.detail;
        }
    }
    return "";
}

Config remote_config(Config c, const std::string& url) {
    c.remote_urls = {url};
    c.remote_timeout = std::chrono::milliseconds(2000);
    const auto keys = write_test_keys(c.dir.parent_path() / "keys").string();
    c.remote_signing_key = keys + ".key";
    c.trusted_keys = {keys + ".pub"};
    return c;
}

}  // namespace kcache::test
