#include "resident_bytes.hpp"
#include "kcache/common/hot_path.hpp"

namespace kcache::service {

KCACHE_HOT_PATH std::optional<ResidentBytes::Hit> ResidentBytes::find(const store::Key& key) {
    std::lock_guard g(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) {
        return std::nullopt;
    }
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->hit;
}

void ResidentBytes::put(const store::Key& key, std::shared_ptr<const store::Bytes> kept,
                        Rung origin) {
    if (kept == nullptr || kept->empty() || kept->size() > max_bytes_) {
        return;
    }
    std::lock_guard g(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
        unlink(it->second);
    }
    bytes_ += kept->size();
    lru_.push_front(Item{key, Hit{std::move(kept), origin}});
    index_.emplace(key, lru_.begin());
    while (bytes_ > max_bytes_) {
        unlink(std::prev(lru_.end()));
    }
}

void ResidentBytes::erase(const store::Key& key) {
    std::lock_guard g(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
        unlink(it->second);
    }
}

std::uint64_t ResidentBytes::size() const {
    std::lock_guard g(mu_);
    return bytes_;
}

void ResidentBytes::unlink(std::list<Item>::iterator it) {
    bytes_ -= it->hit.bytes->size();
    index_.erase(it->key);
    lru_.erase(it);
}

}  // namespace kcache::service
