#pragma once
// Binaries this process has already loaded, decoded and checksum-verified,
// kept in memory under their key so that a new context for the same key
// costs only the driver's load: no store read, no decode, no checksum. The
// key already digests the device identity, driver and compiler, so it stands
// for (device, key). Bounded in bytes; the least recently used goes first.

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "kcache/service/service_api.hpp"
#include "kcache/store/key.hpp"
#include "kcache/store/types.hpp"

namespace kcache::service {

class ResidentBytes {
  public:
    // Bytes kept together with the rung that holds them (see ladder.cpp).
    struct Hit {
        std::shared_ptr<const store::Bytes> bytes;
        Rung origin = Rung::user_store;
    };

    // Keeps at most `max_bytes` of binaries (0: keeps nothing).
    explicit ResidentBytes(std::uint64_t max_bytes) : max_bytes_(max_bytes) {}

    // The bytes kept for `key`, or nullopt.
    std::optional<Hit> find(const store::Key& key);
    // Keeps `bytes` for `key` (replacing what was kept), then applies the
    // bound; a binary larger than the whole bound is not kept. The bytes are
    // shared: a backfill's worker may hold them too.
    void put(const store::Key& key, std::shared_ptr<const store::Bytes> bytes, Rung origin);
    // Whether put() keeps any binary, and one of `size` bytes.
    bool keeps_any() const noexcept { return max_bytes_ != 0; }
    bool keeps(std::size_t size) const noexcept { return size != 0 && size <= max_bytes_; }
    // Forgets `key` (its bytes were rejected by the driver).
    void erase(const store::Key& key);
    // Bytes kept now.
    std::uint64_t size() const;

  private:
    struct Item {
        store::Key key;
        Hit hit;
    };
    void unlink(std::list<Item>::iterator it);

    const std::uint64_t max_bytes_;
    mutable std::mutex mu_;  // guards everything below
    std::list<Item> lru_;    // front: most recently used
    std::map<store::Key, std::list<Item>::iterator> index_;
    std::uint64_t bytes_ = 0;
};

}  // namespace kcache::service
