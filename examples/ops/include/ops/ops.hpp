#pragma once
// ops: a small operator library (conv2d, dot, batchnorm) of the kind kcache is
// built for. Each op asks kcache for a ready program on the context's OpenCL
// device and runs it there; whenever kcache cannot hand one over (timeout,
// crash, build error, unsupported variant, disabled, not ready…) or the device
// run fails, the op computes the same result on the CPU. Every call says which
// path ran and why (`Path`).
//
// Tensors live on the host as floats; `dtype` decides how they are stored on
// the device, so inputs are rounded to `dtype` first and results are values
// of `dtype` on both paths. Per-channel batchnorm parameters stay f32.

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/kcache.hpp"
#include "kcache/kernels/launch.hpp"
#include "kcache/kernels/numeric.hpp"
#include "kcache/kernels/reference.hpp"

namespace ops {

using kcache::kernels::Activation;
using kcache::kernels::BatchnormParams;
using kcache::kernels::BatchnormShape;
using kcache::kernels::Conv2dShape;
using kcache::kernels::DType;

// Which device Context::create may use.
enum class DevicePolicy {
    first_available,  // the first device of the first OpenCL platform that has one
    cpu_only,         // none: every op runs on the CPU path
};

struct Options {
    DevicePolicy device = DevicePolicy::first_available;
    // How long one op may wait for kcache to produce a program (default: the
    // cache's configured jit_timeout).
    std::optional<std::chrono::milliseconds> deadline = std::nullopt;
    kcache::Mode mode = kcache::Mode::blocking;
    // The cache to open; default kcache::Cache::open_default() (KCACHE_* environment).
    std::optional<kcache::Config> cache_config = std::nullopt;
};

// Where an op ran.
enum class Backend { device, cpu };

// Why an op ran on the CPU.
enum class Fallback {
    none,               // it did not: it ran on the device
    no_device,          // the context has no OpenCL device
    cache_unavailable,  // kcache could not be opened (status and message say why)
    not_built,          // kcache gave no program: `status` is timeout, unsupported, disabled…
    launch_failed,      // kcache gave a program, but an OpenCL call failed running it
};

// Returns the enumerator's name ("device", "not_built", …).
const char* to_string(Backend backend);
const char* to_string(Fallback fallback);

// Which path one call took.
struct Path {
    Backend backend = Backend::cpu;
    Fallback fallback = Fallback::no_device;
    // kcache's answer when it was asked (ok when it gave a program).
    std::optional<kcache::StatusCode> status;
    // The rung that answered, or the last one tried (none when not asked).
    kcache::Rung rung = kcache::Rung::none;
    std::string message;  // for people: kcache's message or the OpenCL failure

    // Returns one line: "device (kcache: user_store)" or
    // "cpu (fallback not_built: kcache timeout at failure_record: …)".
    std::string describe() const;
};

// One op's result: its output values (in `dtype`) and the path it took.
struct Output {
    std::vector<float> values;
    Path path;
};

// A batchnorm training forward: the normalised output and the batch
// statistics it used (per channel, f32, biased variance).
struct TrainingOutput {
    std::vector<float> values, mean, var;
    Path path;
};

enum class ErrorCode {
    invalid_shape,  // a shape out of range (or too large for the kernels' 32-bit indices)
    size_mismatch,  // a tensor whose length does not match the shape
};

struct Error {
    ErrorCode code;
    std::string message;
};

template <class T>
using Result = kcache::Result<T, Error>;

// An OpenCL device (or none), its queue, and the kcache instance the ops ask
// for programs. Ops may run from several threads on one Context at once.
class Context {
  public:
    // Opens the first available device (per `options`) and the cache; never
    // fails: without a device or a cache every op takes the CPU path and says why.
    static Context create(const Options& options = {});

    Context(Context&& other) noexcept;
    Context& operator=(Context&& other) noexcept;
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
    ~Context();

    // Returns true when ops may run on an OpenCL device.
    bool has_device() const;
    // Returns the device's name, or "" when there is none.
    std::string device_name() const;
    // Returns the path an op takes before kcache is asked: device (status unset)
    // when device and cache are there, else the CPU fallback and why.
    const Path& readiness() const;
    // Waits up to `limit` for compiles that background mode started.
    void wait_for_background(std::chrono::milliseconds limit);

    struct Impl;
    // The internals, for the ops' implementation files.
    Impl& impl() { return *impl_; }

  private:
    explicit Context(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// y[N][K][OH][OW] = act(conv(x[N][C][H][W], w[K][C/groups][R][S]) + bias[K]).
// `bias` may be empty. Returns invalid_shape or size_mismatch on bad input.
Result<Output> conv2d(Context& ctx, const Conv2dShape& shape, std::span<const float> input,
                      std::span<const float> weight, std::span<const float> bias, Activation act,
                      DType dtype);

// How dot forms its products: in f32 (every device), or in native half
// (dtype f16 only; needs cl_khr_fp16, so kcache reports unsupported without it).
enum class DotArith { f32, f16 };

// The `batch` dot products of rows of length `n` of x and y (row-major, n * batch
// each). Returns size_mismatch on bad lengths, invalid_shape when n * batch
// exceeds 32 bits or arith f16 is asked with another dtype.
Result<Output> dot(Context& ctx, std::span<const float> x, std::span<const float> y, std::size_t n,
                   std::size_t batch, DType dtype, DotArith arith = DotArith::f32);

// y = act((x - mean) * gamma / sqrt(var + eps) + beta) per channel of x[N][C][HW].
// Returns invalid_shape or size_mismatch on bad input.
Result<Output> batchnorm_inference(Context& ctx, const BatchnormShape& shape,
                                   std::span<const float> x, const BatchnormParams& params,
                                   Activation act, DType dtype);

// Training forward: per-channel batch mean and biased variance of x, then the
// inference formula with them. Returns invalid_shape or size_mismatch on bad input.
Result<TrainingOutput> batchnorm_training(Context& ctx, const BatchnormShape& shape,
                                          std::span<const float> x, std::span<const float> gamma,
                                          std::span<const float> beta, float eps, Activation act,
                                          DType dtype);

}  // namespace ops
