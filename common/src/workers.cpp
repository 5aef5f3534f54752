// Threads joined when the cache closes (workers.hpp).

#include "kcache/common/workers.hpp"

#include <memory>
#include <system_error>

namespace kcache {

Workers::~Workers() {
    stop_starting();
    join_all();
}

bool Workers::start(std::function<void()>& work) {
    std::lock_guard g(mu_);
    if (closing_) {
        return false;
    }
    std::erase_if(workers_, [](Worker& w) {  // join finished ones
        if (w.done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
            return false;
        }
        w.thread.join();
        return true;
    });
    auto done = std::make_shared<std::promise<void>>();
    auto task = std::make_shared<std::function<void()>>(std::move(work));
    try {
        std::shared_future<void> finished = done->get_future().share();
        workers_.push_back(Worker{std::thread([task, done] {
                                      (*task)();
                                      done->set_value();
                                  }),
                                  std::move(finished)});
    } catch (const std::system_error&) {
        work = std::move(*task);  // no thread: the caller does the work itself
        return false;
    }
    return true;
}

void Workers::stop_starting() {
    std::lock_guard g(mu_);
    closing_ = true;
}

void Workers::join_all() {
    std::vector<Worker> joining;
    {
        std::lock_guard g(mu_);
        joining.swap(workers_);
    }
    for (auto& w : joining) {
        if (w.thread.joinable()) {
            w.thread.join();
        }
    }
}

}  // namespace kcache
