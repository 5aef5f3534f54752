// Plans kept for root devices (plan_memo.hpp).

#include "plan_memo.hpp"
#include "kcache/common/hot_path.hpp"

namespace kcache::service {

KCACHE_HOT_PATH std::unique_ptr<Plan> PlanMemo::take(cl_device_id device,
                                                     const std::string& signature) {
    std::lock_guard g(mu_);
    auto it = plans_.find(PlaceView{device, signature});
    // Its place stays, empty while the request runs.
    return it == plans_.end() ? nullptr : std::move(it->second);
}

KCACHE_HOT_PATH void PlanMemo::keep(cl_device_id device, const std::string& signature,
                                    std::unique_ptr<Plan> plan, bool root) {
    // Root devices only: they live as long as the process, so their handle
    // cannot come back naming another device (a released sub-device's can).
    if (max_ == 0 || (!root && !loader_.is_root_device(device))) {
        return;
    }
    std::lock_guard g(mu_);
    if (auto it = plans_.find(PlaceView{device, signature}); it != plans_.end()) {
        it->second = std::move(plan);  // back in its place
        return;
    }
    if (plans_.size() >= max_) {
        plans_.erase(plans_.begin());
    }
    plans_.emplace(Place{device, signature}, std::move(plan));
}

}  // namespace kcache::service
