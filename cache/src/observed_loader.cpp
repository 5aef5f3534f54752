// The observed loader (observed_loader.hpp).

#include "observed_loader.hpp"

#include "kcache/cache/metrics.hpp"
#include "kcache/cache/trace.hpp"

namespace kcache {
namespace service {
namespace {

// Every call goes to the inner loader; load() is timed.
class ObservedLoader final : public Loader {
  public:
    ObservedLoader(std::unique_ptr<Loader> inner, bool metrics)
        : inner_(std::move(inner)), metrics_(metrics) {}

    Result<device_db::DeviceIdentity, std::string> identify(cl_device_id device) override {
        return inner_->identify(device);
    }
    // The calls of a hit in a new context are [[gnu::hot]], as the inner
    // loader's: the linker keeps them beside the rest of that path.
    bool is_root_device(cl_device_id device) override { return inner_->is_root_device(device); }
    [[gnu::hot]] cl_platform_id platform_of(cl_device_id device) override {
        return inner_->platform_of(device);
    }
    [[gnu::hot]] bool device_in_context(cl_context context, cl_device_id device,
                                        std::string& why) override {
        return inner_->device_in_context(context, device, why);
    }
    [[gnu::hot]] Result<cl::ProgramHandle, std::string> load(cl_context context,
                                                             cl_device_id device,
                                                             std::span<const std::uint8_t> bytes,
                                                             const std::string& options) override {
        trace::Span span("load", "load");
        const auto start = std::chrono::steady_clock::now();
        auto program = inner_->load(context, device, bytes, options);
        if (metrics_) {
            metrics::observe(metrics::Timer::load, std::chrono::steady_clock::now() - start);
        }
        if (span.active()) {
            span.arg("bytes", std::to_string(bytes.size()));
            span.arg("result", program ? "ok" : "rejected");
        }
        return program;
    }
    Result<std::vector<std::uint8_t>, std::string> binary_of(cl_program program) override {
        return inner_->binary_of(program);
    }
    [[gnu::hot]] std::uint32_t context_references(cl_context context) override {
        return inner_->context_references(context);
    }
    bool counts_programs(cl_context context) override { return inner_->counts_programs(context); }
    [[gnu::hot]] cl::ContextHandle retain(cl_context context) override {
        return inner_->retain(context);
    }
    [[gnu::hot]] cl_program retain(cl_program program) override { return inner_->retain(program); }

  private:
    std::unique_ptr<Loader> inner_;
    bool metrics_;
};

}  // namespace

std::unique_ptr<Loader> observed_loader(std::unique_ptr<Loader> inner, bool metrics) {
    return std::make_unique<ObservedLoader>(std::move(inner), metrics);
}

}  // namespace service
}  // namespace kcache
