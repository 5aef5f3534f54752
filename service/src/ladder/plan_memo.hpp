#pragma once
// Plans resolved for root devices, by (device, request signature), before
// any deadline is applied: a new context for a request this cache has
// answered skips the quirks, rendering and key hashing. At most
// `max_plans`; when full, one is dropped to make room. A plan is taken out
// while its request walks the ladder and put back in its place: only its
// pointer moves, the plan stays where it was built.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cl_util.hpp"
#include "kcache/service/loader.hpp"
#include "plan.hpp"

namespace kcache::service {

class PlanMemo {
  public:
    // `loader` must outlive this object.
    PlanMemo(std::size_t max_plans, Loader& loader) : max_(max_plans), loader_(loader) {}
    // Takes out the plan kept for (`device`, `signature`), or returns null
    // (another thread asking meanwhile resolves its own).
    std::unique_ptr<Plan> take(cl_device_id device, const std::string& signature);
    // Puts `plan` (back) for a root device (`root`: known to be one).
    void keep(cl_device_id device, const std::string& signature, std::unique_ptr<Plan> plan,
              bool root);

  private:
    using Place = HandlesAndText<cl_device_id>;
    using PlaceView = HandlesAndTextView<cl_device_id>;
    const std::size_t max_;
    Loader& loader_;
    std::mutex mu_;  // guards plans_
    std::map<Place, std::unique_ptr<Plan>, HandlesThenText> plans_;
};

}  // namespace kcache::service
