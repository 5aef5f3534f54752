#include "remote_fetch.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bench_env.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/config/remote_tier.hpp"
#include "kcache/store/store.hpp"
#include "remote_roles.hpp"

namespace kcache::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kEntries = 8;
constexpr std::size_t kBytes = 48 * 1024;

store::KeyFields fields_of(int n) {
    store::KeyFields f;
    f.kernel_name = "bench_" + std::to_string(n);
    f.source_digest = sha256_hex("bench source " + std::to_string(n));
    f.entry_points = {"k"};
    f.target_format = "native";
    f.device_name = "bench device";
    f.driver_version = "1";
    f.platform_name = "bench";
    f.compiler_id = "bench";
    return f;
}

store::Bytes bytes_of(int n) {
    store::Bytes b(kBytes);
    std::uint32_t x = 2463534242u + static_cast<std::uint32_t>(n);
    for (std::size_t i = 0; i < b.size(); ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b[i] = i % 4 == 0 ? static_cast<std::uint8_t>(x) : static_cast<std::uint8_t>(i / 64);
    }
    return b;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

template <typename F>
double timed_us(F&& f) {
    const auto start = Clock::now();
    f();
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

}  // namespace

void storage_level(const std::vector<Remote>& remotes, int reps) {
    std::printf(
        "\n1b. storage level, no OpenCL: Store::get vs remote Client::fetch of %d\n"
        "    entries of %zu KiB in one warm process (median per lookup, us)\n",
        kEntries, kBytes / 1024);
    std::printf("%-14s %10s %10s %8s\n", "backend", "store", "remote", "ratio");
    store::Provenance prov;
    prov.origin = store::Origin::jit;
    for (const Remote& r : remotes) {
        const ScopedEnv env(r.env);
        const Config c = node_config(fresh_dir("fetch"), UseRemote::yes);
        auto client = remote::Client::open(service::remote_settings(c));
        auto local = store::Store::open(fresh_dir("fetch-store"));
        if (!client || !local) {
            die("storage level: cannot open the client or the store");
        }
        for (int n = 0; n < kEntries; ++n) {
            if (!(*client)->upload(fields_of(n), bytes_of(n), prov) ||
                !local->put(fields_of(n), bytes_of(n), prov)) {
                die("storage level: cannot store entry " + std::to_string(n));
            }
        }
        std::vector<double> s, m;
        for (int i = 0; i < reps; ++i) {  // interleaved: the same load on both
            for (int n = 0; n < kEntries; ++n) {
                s.push_back(timed_us([&] { (void)local->get(fields_of(n)); }));
                m.push_back(timed_us([&] {
                    if (!(*client)->fetch(fields_of(n))) {
                        die("storage level: a fetch failed on " + r.name);
                    }
                }));
            }
        }
        std::printf("%-14s %10.0f %10.0f %7.2fx\n", r.name.c_str(), median(s), median(m),
                    median(m) / median(s));
    }
}

void batches(const std::vector<Remote>& remotes, int reps) {
    constexpr int kBatch = 32;
    std::printf(
        "\n1c. batches of %d entries of %zu KiB (push, pull) vs one request at a time\n"
        "    (median per object, us)\n",
        kBatch, kBytes / 1024);
    std::printf("%-14s %10s %10s %10s %10s\n", "backend", "put one", "put batch", "get one",
                "get batch");
    store::Provenance prov;
    prov.origin = store::Origin::jit;
    std::vector<store::KeyFields> fields;
    std::vector<store::Bytes> bytes;
    for (int n = 0; n < kBatch; ++n) {
        fields.push_back(fields_of(1000 + n));
        bytes.push_back(bytes_of(1000 + n));
    }
    std::vector<remote::Client::UploadItem> items;
    for (int n = 0; n < kBatch; ++n) {
        items.push_back({&fields[n], bytes[n], &prov});
    }
    for (const Remote& r : remotes) {
        const ScopedEnv env(r.env);
        const Config c = node_config(fresh_dir("batch"), UseRemote::yes);
        auto client = remote::Client::open(service::remote_settings(c));
        if (!client) {
            die("batches: cannot open the client");
        }
        std::vector<double> put1, putn, get1, getn;
        for (int i = 0; i < reps; ++i) {
            put1.push_back(timed_us([&] {
                               for (int n = 0; n < kBatch; ++n) {
                                   (void)(*client)->upload(fields[n], bytes[n], prov);
                               }
                           }) /
                           kBatch);
            putn.push_back(timed_us([&] { (void)(*client)->upload_many(items); }) / kBatch);
            get1.push_back(timed_us([&] {
                               for (int n = 0; n < kBatch; ++n) {
                                   (void)(*client)->fetch(fields[n]);
                               }
                           }) /
                           kBatch);
            getn.push_back(timed_us([&] { (void)(*client)->fetch_many(fields); }) / kBatch);
        }
        const auto k = (*client)->counters();
        if (k.misses != 0 || k.upload_failures != 0) {
            die("batches: a request failed on " + r.name);
        }
        std::printf("%-14s %10.0f %10.0f %10.0f %10.0f\n", r.name.c_str(), median(put1),
                    median(putn), median(get1), median(getn));
    }
}

}  // namespace kcache::bench
