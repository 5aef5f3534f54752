// Background uploads: a bounded queue drained by one thread, so a JIT's
// caller never waits on the network. Closing flushes it within a time bound;
// what is left then is dropped and counted as failed.

#include "client_impl.hpp"

namespace kcache::remote {

void Client::enqueue(const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
                     const store::Provenance& provenance) {
    if (auto why = why_no_uploads()) {
        impl_->upload_notes.add("not sent", "not sent: " + *why);
        return;  // read-only, or unsigned while signatures are required
    }
    std::lock_guard g(impl_->mu);
    if (impl_->stopping || impl_->queue.size() >= impl_->settings.queue_capacity) {
        impl_->counters.upload_failures++;
        impl_->upload_notes.add(
            "queue full", impl_->stopping ? "not sent: the client was closing"
                                          : "not sent: the upload queue was full (" +
                                                std::to_string(impl_->queue.size()) + " waiting)");
        return;
    }
    impl_->queue.push_back(Upload{fields, store::Bytes(bytes.begin(), bytes.end()), provenance});
    if (!impl_->worker.joinable()) {
        impl_->worker = std::thread([this] { impl_->run_worker(); });
    }
    impl_->wake.notify_one();
}

std::size_t Client::flush(std::chrono::milliseconds limit) {
    std::unique_lock g(impl_->mu);
    impl_->idle.wait_for(g, limit, [&] { return impl_->queue.empty() && !impl_->busy; });
    return impl_->queue.size() + (impl_->busy ? 1 : 0);
}

void Client::Impl::run_worker() {
    std::unique_lock g(mu);
    for (;;) {
        wake.wait(g, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) {
            return;  // stopping, nothing left
        }
        Upload u = std::move(queue.front());
        queue.pop_front();
        busy = true;
        g.unlock();
        (void)upload_one(u.fields, u.bytes, u.provenance);  // counts its own outcome
        g.lock();
        busy = false;
        if (queue.empty()) {
            idle.notify_all();
        }
    }
}

void Client::Impl::stop_worker(std::chrono::milliseconds limit) {
    std::unique_lock g(mu);
    idle.wait_for(g, limit, [&] { return queue.empty() && !busy; });
    stopping = true;
    counters.upload_failures += queue.size();  // not sent within the bound
    for (std::size_t i = 0; i < queue.size(); ++i) {
        upload_notes.add("closing", "not sent before the client closed (" +
                                        std::to_string(limit.count()) + " ms for the queue)");
    }
    queue.clear();
    wake.notify_all();
    g.unlock();
    if (worker.joinable()) {
        worker.join();  // at most the one request in flight, itself bounded by the timeout
    }
}

}  // namespace kcache::remote
