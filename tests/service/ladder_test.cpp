// Every rung of the lookup ladder on PoCL, with real compiles in kcache-jit.

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>

#include "cache_fixture.hpp"
#include "kcache/canary/binary_vouch.hpp"
#include "kcache/service/keys.hpp"
#include "kcache/store/pack.hpp"
#include "test_platform.hpp"

namespace kcache::test {
namespace {

using ServiceLadder = CacheTest;
using std::chrono::milliseconds;

TEST_F(ServiceLadder, CallerKernelWalksTheLadder) {
    auto cache = open();
    ASSERT_TRUE(cache);
    auto first = cache->program(context_, device_, scale_request(7));
    ASSERT_EQ(first.outcome().status, StatusCode::ok) << first.outcome().message;
    EXPECT_EQ(first.outcome().rung, Rung::jit);
    EXPECT_TRUE(missed_with(first.outcome(), Rung::user_store, MissCause::not_found));
    EXPECT_TRUE(missed_with(first.outcome(), Rung::aot, MissCause::no_aot_target));
    EXPECT_FLOAT_EQ(run_scale(context_, device_, first.get(), 3.0f), 2.0f * 3.0f + 7.0f);

    auto again = cache->program(context_, device_, scale_request(7));
    ASSERT_EQ(again.outcome().status, StatusCode::ok);
    EXPECT_EQ(again.outcome().rung, Rung::in_process);
    EXPECT_EQ(cache->stats().jit_compiles, 1u);

    auto other = open();  // a new process would see the same: the user store
    auto stored = other->program(context_, device_, scale_request(7));
    ASSERT_EQ(stored.outcome().status, StatusCode::ok) << stored.outcome().message;
    EXPECT_EQ(stored.outcome().rung, Rung::user_store);
    EXPECT_EQ(stored.outcome().key, first.outcome().key);
    EXPECT_EQ(other->stats().jit_compiles, 0u);
    EXPECT_FLOAT_EQ(run_scale(context_, device_, stored.get(), 0.5f), 2.0f * 0.5f + 7.0f);
}

TEST_F(ServiceLadder, AFreshCacheLoadsAStoredBinaryFromItsHotCopyWithoutSQLite) {
    {
        auto cache = open();
        ASSERT_TRUE(cache->program(context_, device_, scale_request(8)).ok());
    }
    // The store file was stamped: SQLite waits for a need, and so do the
    // packs (a bad one here would log a warning when opened).
    const auto bad_pack = dir() / "bad.kcpack";
    std::ofstream(bad_pack) << "not a pack";
    auto with_pack = config();
    with_pack.packs = {bad_pack};
    std::vector<std::string> logged;
    set_log_handler([&](LogLevel, std::string_view m) { logged.emplace_back(m); });
    Outcome opened;
    auto cache = Cache::open(with_pack, &opened);
    ASSERT_TRUE(cache) << opened.message;
    // With the database moved away, only the entry's hot copy can answer.
    const auto store = config().dir;
    for (const char* suffix : {"", "-wal", "-shm"}) {
        std::error_code ec;
        std::filesystem::rename(store / (std::string(store::kStoreFileName) + suffix),
                                store / (std::string("aside") + suffix), ec);
    }
    auto p = cache->program(context_, device_, scale_request(8));
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::user_store);
    EXPECT_FALSE(p.outcome().resident);
    EXPECT_EQ(cache->stats().jit_compiles, 0u);
    EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 2.0f), 2.0f * 2.0f + 8.0f);
    set_log_handler(nullptr);
    EXPECT_TRUE(logged.empty()) << "a pack was opened for a hit in the user store: " << logged[0];

    // With hot copies off, a fresh cache reads SQLite (here: a new, empty store).
    auto c = config();
    c.max_hot_bytes = 0;
    std::filesystem::remove_all(store / "hot");
    Outcome o;
    auto cold = Cache::open(c, &o);
    ASSERT_TRUE(cold) << o.message;
    auto q = cold->program(context_, device_, scale_request(8));
    ASSERT_EQ(q.outcome().status, StatusCode::ok) << q.outcome().message;
    EXPECT_EQ(q.outcome().rung, Rung::jit);
}

TEST_F(ServiceLadder, KeyFollowsSourceAndOptionsNotName) {
    auto cache = open();
    auto base = cache->program(context_, device_, scale_request(1));
    ASSERT_TRUE(base.ok()) << base.outcome().message;

    auto renamed_req = scale_request(1);
    renamed_req.name = "another_name";
    auto renamed = cache->program(context_, device_, renamed_req);
    EXPECT_EQ(renamed.outcome().key, base.outcome().key);
    EXPECT_EQ(renamed.outcome().rung, Rung::in_process);

    auto new_source = cache->program(context_, device_, scale_request(2));
    EXPECT_NE(new_source.outcome().key, base.outcome().key);
    EXPECT_EQ(new_source.outcome().rung, Rung::jit);

    auto opts_req = scale_request(1);
    opts_req.options = "-cl-fast-relaxed-math";
    auto new_opts = cache->program(context_, device_, opts_req);
    ASSERT_TRUE(new_opts.ok()) << new_opts.outcome().message;
    EXPECT_NE(new_opts.outcome().key, base.outcome().key);
    EXPECT_EQ(new_opts.outcome().rung, Rung::jit);
}

TEST_F(ServiceLadder, AliasFindsTheSameBinary) {
    auto cache = open();
    KernelRequest canonical{"qconv_pointwise", {}, std::nullopt, Mode::blocking};
    auto a = cache->program(context_, device_, canonical);
    ASSERT_TRUE(a.ok()) << a.outcome().message;
    KernelRequest old_name{"qconv2d_pointwise", {}, std::nullopt, Mode::blocking};
    auto other = open();
    auto b = other->program(context_, device_, old_name);
    ASSERT_TRUE(b.ok()) << b.outcome().message;
    EXPECT_EQ(b.outcome().key, a.outcome().key);
    EXPECT_EQ(b.outcome().rung, Rung::user_store);
}

// Builds scale_request(3) with `cache` (of the store dir/builder), lets
// `edit` change that store, then exports it to the pack dir/`name` (one entry).
void build_pack(std::unique_ptr<Cache> cache, cl_context context, cl_device_id device,
                const std::filesystem::path& dir, const std::string& name,
                const std::function<void(store::Store&)>& edit = {}) {
    ASSERT_TRUE(cache->program(context, device, scale_request(3)).ok());
    cache.reset();
    auto builder = store::Store::open(dir / "builder");
    ASSERT_TRUE(builder) << builder.error().message;
    if (edit) {
        edit(*builder);
    }
    auto exported = builder->export_pack(dir / name);
    ASSERT_TRUE(exported) << exported.error().message;
    ASSERT_EQ(*exported, 1u);
}

// What a fresh cache (store dir()/fresh) that reads a pack answers for
// scale_request(3), as the pack tests check it.
struct PackAnswer {
    Outcome outcome;
    std::uint64_t jit_compiles = 0;
};

class ServicePacks : public CacheTest {
  protected:
    // Asks a fresh cache reading the pack dir()/`pack` for scale_request(3);
    // fails the test unless it opens and answers with a program that computes
    // what scale_source(3) says.
    PackAnswer ask_with_pack(const std::string& pack) const {
        auto c = config("fresh");
        c.packs = {dir() / pack};
        auto cache = open(c);
        if (!cache) {
            return {};
        }
        auto p = cache->program(context_, device_, scale_request(3));
        EXPECT_TRUE(p.ok()) << p.outcome().message;
        if (p.ok()) {
            EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 1.0f), 5.0f);
        }
        return {p.outcome(), cache->stats().jit_compiles};
    }
};

TEST_F(ServicePacks, PackAnswersAfterTheUserStore) {
    build_pack(open("builder"), context_, device_, dir(), "system.kcpack");
    const PackAnswer answer = ask_with_pack("system.kcpack");
    EXPECT_EQ(answer.outcome.rung, Rung::pack);
    EXPECT_TRUE(missed_with(answer.outcome, Rung::user_store, MissCause::answered_below));
    EXPECT_EQ(answer.jit_compiles, 0u);
    // Its load check in kcache-verify is kept for the node beside the user store.
    std::size_t vouched = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir() / "fresh" / "vouched")) {
        vouched += e.is_regular_file() ? 1 : 0;
    }
    EXPECT_EQ(vouched, 1u);
}

// A pack's binary is loaded in kcache-verify before this process loads it:
// a truncated one (PoCL asserts in its loader: it would abort this test) with
// its checksum recomputed is a miss and a JIT.
TEST_F(ServicePacks, ATruncatedPackBinaryIsAMissAndAJitNeverASignal) {
    build_pack(
        open("builder"), context_, device_, dir(), "damaged.kcpack", [](store::Store& builder) {
            auto listed = builder.list();
            ASSERT_TRUE(listed && listed->size() == 1u);
            auto entry = builder.get((*listed)[0].key);
            ASSERT_TRUE(entry);
            store::Bytes half(entry->bytes.begin(), entry->bytes.begin() + entry->bytes.size() / 2);
            ASSERT_TRUE(builder.remove(entry->info.key));
            ASSERT_TRUE(builder.put(entry->info.fields, half, entry->info.provenance));
        });
    const PackAnswer answer = ask_with_pack("damaged.kcpack");
    EXPECT_EQ(answer.outcome.rung, Rung::jit);
    EXPECT_TRUE(missed_with(answer.outcome, Rung::pack, MissCause::rejected_by_driver));
    EXPECT_EQ(answer.jit_compiles, 1u);
}

// An entry that kcache's publish step did not put in the user store (here a
// binary ocloc built for another device, stored by hand under this device's
// key) is loaded in kcache-verify before this process loads it: a driver that
// rejects it (PoCL) and one that aborts the process on it (rusticl) both
// make it a recorded miss, and the JIT's binary that replaces it is trusted.
TEST_F(ServiceLadder, RejectedBinaryIsRecordedThenJit) {
    auto req = scale_request(4);
    auto bytes = tgllp_binary(dir(), req.source);
    ASSERT_FALSE(bytes.empty()) << "ocloc did not produce a tgllp binary";
    auto id = device_db::probe(device_);
    ASSERT_TRUE(id);
    auto fields = device_db::jit_key_fields(*id, {req.name, req.source, "", req.entry_points});
    {
        auto st = store::Store::open(dir() / "store");
        ASSERT_TRUE(st);
        ASSERT_TRUE(st->put(fields, bytes, {}));
    }
    auto cache = open();
    auto p = cache->program(context_, device_, req);
    ASSERT_TRUE(p.ok()) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    EXPECT_TRUE(
        missed_with(p.outcome(), Rung::user_store, MissCause::rejected_by_driver, "kcache-verify"))
        << "checked in the helper (rusticl's aborts it), not loaded here first";
    // Rejected as its hot copy: the entry went with it before the store was read.
    EXPECT_TRUE(missed_with(p.outcome(), Rung::user_store, MissCause::not_found));
    EXPECT_EQ(p.outcome().key, store::make_key(fields).hex());
    EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 1.0f), 6.0f);
    cache.reset();  // waits for the warm-up that may follow the answer

    auto st = store::Store::open(dir() / "store");
    ASSERT_TRUE(st);
    auto rec = st->find_fresh_failure(store::make_key(fields));
    ASSERT_TRUE(rec && *rec);
    EXPECT_EQ((*rec)->kind, store::FailureKind::rejected_binary);
    auto entry = st->get(fields);  // the JIT binary replaced the rejected one
    ASSERT_TRUE(entry);
    EXPECT_EQ(entry->info.provenance.origin, store::Origin::jit);
    // The JIT's binary has the hot copy now.
    auto hot = st->get_hot(fields);
    ASSERT_TRUE(hot);
    EXPECT_TRUE(*hot == entry->bytes);
    // kcache put it there: recorded, so trusted without the helper.
    EXPECT_TRUE(service::stored_here(dir() / "store" / "vouched", store::make_key(fields)));
    auto again = open();
    auto hit = again->program(context_, device_, req);
    ASSERT_TRUE(hit.ok()) << hit.outcome().message;
    EXPECT_EQ(hit.outcome().rung, Rung::user_store);
}

TEST_F(ServiceLadder, SlowKernelTimesOutThenFailsFastFromTheRecord) {
    auto cache = open();
    SourceRequest slow;
    slow.source = nested_macro_kernel(17);
    slow.deadline = milliseconds(1500);
    auto t0 = std::chrono::steady_clock::now();
    auto p = cache->program(context_, device_, slow);
    auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(p.outcome().status, StatusCode::timeout) << p.outcome().message;
    EXPECT_LT(took, milliseconds(1500 + 500));
    EXPECT_EQ(cache->stats().jit_compiles, 1u);

    t0 = std::chrono::steady_clock::now();
    auto again = cache->program(context_, device_, slow);
    took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(again.outcome().status, StatusCode::timeout);
    EXPECT_EQ(again.outcome().rung, Rung::failure_record);
    EXPECT_LT(took, milliseconds(50));
    EXPECT_EQ(cache->stats().jit_compiles, 1u);  // no second compile started
}

TEST_F(ServiceLadder, BuildErrorComesBackWithTheLog) {
    auto cache = open();
    SourceRequest bad;
    bad.source = "__kernel void broken(__global float* a) { a[0] = undeclared_thing; }\n";
    auto p = cache->program(context_, device_, bad);
    EXPECT_EQ(p.outcome().status, StatusCode::build_error);
    EXPECT_NE(p.outcome().message.find("undeclared_thing"), std::string::npos)
        << p.outcome().message;
    auto again = cache->program(context_, device_, bad);
    EXPECT_EQ(again.outcome().status, StatusCode::build_error);
    EXPECT_EQ(again.outcome().rung, Rung::failure_record);
}

TEST_F(ServiceLadder, FailFastAndBackgroundModes) {
    auto cache = open();
    auto req = scale_request(5);
    req.mode = Mode::fail_fast;
    auto ff = cache->program(context_, device_, req);
    EXPECT_EQ(ff.outcome().status, StatusCode::not_cached);
    EXPECT_EQ(cache->stats().jit_compiles, 0u);

    req.mode = Mode::background;
    auto bg = cache->program(context_, device_, req);
    EXPECT_EQ(bg.outcome().status, StatusCode::not_ready);
    EXPECT_FALSE(bg.ok());
    cache->drain(milliseconds(30'000));
    req.mode = Mode::fail_fast;
    auto hit = cache->program(context_, device_, req);
    ASSERT_EQ(hit.outcome().status, StatusCode::ok) << hit.outcome().message;
    EXPECT_EQ(hit.outcome().rung, Rung::user_store);
    EXPECT_EQ(cache->stats().jit_compiles, 1u);
}

TEST_F(ServiceLadder, BadRequestsGetTypedErrors) {
    auto cache = open();
    KernelRequest unknown{"no_such_kernel", {}, std::nullopt, Mode::blocking};
    EXPECT_EQ(cache->program(context_, device_, unknown).outcome().status,
              StatusCode::unknown_kernel);
    KernelRequest bad_value{"dot", {{"dtype", "f64"}}, std::nullopt, Mode::blocking};
    EXPECT_EQ(cache->program(context_, device_, bad_value).outcome().status,
              StatusCode::invalid_argument);
    KernelRequest needs_fp16{
        "dot", {{"dtype", "f16"}, {"arith", "f16"}}, std::nullopt, Mode::blocking};
    auto unsup = cache->program(context_, device_, needs_fp16);
    EXPECT_EQ(unsup.outcome().status, StatusCode::unsupported) << unsup.outcome().message;
    EXPECT_NE(unsup.outcome().message.find("cl_khr_fp16"), std::string::npos);

    KernelRequest dot{"dot", {}, std::nullopt, Mode::blocking};
    EXPECT_EQ(cache->program(nullptr, device_, dot).outcome().status, StatusCode::invalid_argument);
    EXPECT_EQ(cache->program(context_, nullptr, dot).outcome().status,
              StatusCode::invalid_argument);
    EXPECT_EQ(cache->program(context_, device_, SourceRequest{}).outcome().status,
              StatusCode::invalid_argument);

    // A sub-device is a real device that is not in the root device's context
    // (GPU drivers without sub-devices: KCACHE_TEST_PLATFORM runs skip this part).
    cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_device_id subs[64] = {};
    cl_uint n = 0;
    if (test_platform_name() != "Portable Computing Language") {
        std::fprintf(stderr, "sub-device mismatch case not run on %s\n",
                     test_platform_name().c_str());
    } else if (clCreateSubDevices(device_, props, 64, subs, &n) == CL_SUCCESS && n >= 1) {
        auto mismatch = cache->program(context_, subs[0], dot);
        EXPECT_EQ(mismatch.outcome().status, StatusCode::invalid_argument);
        EXPECT_NE(mismatch.outcome().message.find("does not belong"), std::string::npos);
        for (cl_uint i = 0; i < n; ++i) {
            clReleaseDevice(subs[i]);
        }
    } else {
        ADD_FAILURE() << "PoCL could not create a sub-device for the mismatch case";
    }
    EXPECT_EQ(cache->stats().jit_compiles, 0u);  // nothing was compiled for bad input
}

}  // namespace
}  // namespace kcache::test
