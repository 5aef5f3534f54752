// Errata at run time, through the C++ API on PoCL under the test layer (which
// reports a made-up driver version per test): an erratum carried by a signed
// pack, kept in the node's file or held by the remote tier (a real nginx) is
// applied to the running driver before anything is compiled for it, under
// the canary's policy; one for another driver range is not. The driver's
// canary verdicts are stored first (all validated), so no canary runs but in
// the test of the canary's own publication.

#include <gtest/gtest.h>

#include <thread>

#include "canary_support.hpp"
#include "jit_support.hpp"
#include "kcache/canary/errata.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/service/service_api.hpp"
#include "kcache/store/pack_errata.hpp"
#include "kcache/store/store.hpp"
#include "kcache/store/trust.hpp"
#include "remote_support.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

KernelRequest dot(std::map<std::string, std::string> params = {}) {
    return kernel_request("dot", std::move(params));
}

class ErrataRuntime : public FaultLayerContextTest {
  protected:
    // The running driver as the cache names it (under the test's KCACHE_FAULT_DRIVER).
    static canary::DriverIdentity running() { return canary::driver_identity(test_device()); }

    // A store whose canary verdicts for the running driver are all validated.
    std::filesystem::path validated_store(const std::string& name) const {
        canary::Record r;
        r.identity = running();
        for (const kernels::Variant& v : canary::default_set(test_device())) {
            canary::Verdict passed;
            passed.variant = v.id();
            passed.state = canary::VerdictState::validated;
            passed.detail = "passed";
            r.verdicts.push_back(passed);
        }
        EXPECT_TRUE(canary::save_record(canary::canary_dir(dir() / name), r));
        return dir() / name;
    }

    Config config(const std::filesystem::path& store, CanaryPolicy policy) const {
        Config c;
        c.dir = store;
        c.jit_helper = jit_helper_path();
        c.canary = policy;
        return c;
    }

    // dot on the running driver's vendor, for drivers `min`..`max`.
    static errata::Erratum dot_erratum(const std::string& min, const std::string& max) {
        errata::Erratum e;
        e.vendor_id = running().vendor_id;
        e.kernel = "dot";
        e.driver_min = min;
        e.driver_max = max;
        e.check = "result";
        e.evidence = "partial sums subtracted";
        return e;
    }
};

TEST_F(ErrataRuntime, AnErratumCarriedByASignedPackIsAppliedUnderEnforce) {
    ScopedEnv env({"KCACHE_FAULT_DRIVER=7.5-pack"});
    auto source = store::Store::open(dir() / "source");
    ASSERT_TRUE(source);
    const auto pack = dir() / "errata.kcpack";
    ASSERT_TRUE(source->export_pack(pack));
    ASSERT_TRUE(store::write_pack_errata(pack, errata::to_json({dot_erratum("7.0", "7.9")})));
    const auto keys = write_test_keys(dir() / "keys");
    ASSERT_TRUE(store::sign_pack(pack, test_signing_key()));

    Config c = config(validated_store("store"), CanaryPolicy::enforce);
    c.packs = {pack};
    c.trusted_keys = {keys.string() + ".pub"};
    c.require_signed_packs = true;
    auto cache = Cache::open(c);
    ASSERT_TRUE(cache);
    Program p = cache->program(context_, device_, dot());
    EXPECT_EQ(p.outcome().status, StatusCode::driver_suspect) << p.outcome().message;
    EXPECT_EQ(p.get(), nullptr);
    EXPECT_NE(p.outcome().message.find("erratum " + dot_erratum("7.0", "7.9").id()),
              std::string::npos)
        << p.outcome().message;
    KernelRequest conv;
    conv.kernel = "conv2d";
    p = cache->program(context_, device_, conv);
    EXPECT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
}

TEST_F(ErrataRuntime, AnErratumForAnotherDriverRangeIsNotAppliedAndWarnServesACoveredVariant) {
    ScopedEnv env({"KCACHE_FAULT_DRIVER=7.5-range"});
    const auto other = validated_store("other");
    ASSERT_TRUE(errata::add_local(other, {dot_erratum("8.0", "8.9")}, "test"));
    auto enforced = Cache::open(config(other, CanaryPolicy::enforce));
    ASSERT_TRUE(enforced);
    Program p = enforced->program(context_, device_, dot());
    EXPECT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;

    const auto covered = validated_store("covered");
    ASSERT_TRUE(errata::add_local(covered, {dot_erratum("7.5", "")}, "test"));
    LogLines log;
    auto warned = Cache::open(config(covered, CanaryPolicy::warn));
    ASSERT_TRUE(warned);
    p = warned->program(context_, device_, dot());
    EXPECT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_NE(p.get(), nullptr);
    warned.reset();  // the gates under warn ran on its worker, after the answer
    EXPECT_NE(log.text().find("erratum"), std::string::npos) << log.text();
    EXPECT_NE(log.text().find("served anyway (KCACHE_CANARY=warn)"), std::string::npos);
}

class ErrataRemote : public ErrataRuntime {
  protected:
    void SetUp() override {
        ErrataRuntime::SetUp();
        server_ = start_nginx(dir() / "nginx");
        ASSERT_TRUE(server_);
        keys_ = write_test_keys(dir() / "keys");
    }
    // A node of the shared remote: trusts the test key, and signs with it when `writer`.
    Config node(const std::filesystem::path& store, CanaryPolicy policy, bool writer) const {
        Config c = config(store, policy);
        c.remote_urls = {server_->url()};
        c.trusted_keys = {keys_.string() + ".pub"};
        if (writer) {
            c.remote_signing_key = keys_.string() + ".key";
        }
        return c;
    }
    std::optional<NginxServer> server_;
    std::filesystem::path keys_;
};

TEST_F(ErrataRemote, ACanarysSuspectVerdictIsPublishedAndAppliedByAnotherNode) {
    std::vector<std::string> faults = {
        "KCACHE_FAULT_MATCH=dot_partial", "KCACHE_FAULT_SOURCE_FROM=acc += KC_PRODUCT",
        "KCACHE_FAULT_SOURCE_TO=acc -= KC_PRODUCT", "KCACHE_FAULT_DRIVER=7.5-published"};
    ScopedEnv env(faults);
    {
        auto finder = Cache::open(node(dir() / "finder", CanaryPolicy::warn, true));
        ASSERT_TRUE(finder);  // its first request runs the canary, which finds dot suspect
        Program found = finder->program(context_, device_, dot());
        EXPECT_EQ(found.outcome().status, StatusCode::ok) << found.outcome().message;
    }
    auto other = Cache::open(node(validated_store("other"), CanaryPolicy::enforce, false));
    ASSERT_TRUE(other);
    Program p = other->program(context_, device_, dot());
    EXPECT_EQ(p.outcome().status, StatusCode::driver_suspect) << p.outcome().message;
    EXPECT_NE(p.outcome().message.find("remote tier"), std::string::npos) << p.outcome().message;
    auto kept = errata::load_local(dir() / "other");  // the next process needs no remote
    ASSERT_TRUE(kept) << kept.error().message;
    ASSERT_EQ(kept->size(), 1u);
    EXPECT_EQ((*kept)[0].kernel, "dot");
    EXPECT_EQ((*kept)[0].driver_min, "7.5-published");
}

TEST_F(ErrataRemote, KcacheCanaryPublishesItsSuspectFindings) {
    std::vector<std::string> env = {
        "KCACHE_FAULT_MATCH=dot_partial", "KCACHE_FAULT_SOURCE_FROM=acc += KC_PRODUCT",
        "KCACHE_FAULT_SOURCE_TO=acc -= KC_PRODUCT", "KCACHE_FAULT_DRIVER=7.5-cli"};
    ScopedEnv faults(env);  // this process's driver too, for running() below
    compiler::SpawnSpec spec;
    spec.program = KCACHE_CLI_PATH;
    spec.args = {"canary", "--seed", "5"};
    spec.env_overrides = env;
    spec.env_overrides.push_back("KCACHE_DIR=" + (dir() / "finder").string());
    spec.env_overrides.push_back("KCACHE_REMOTE=" + server_->url());
    spec.env_overrides.push_back("KCACHE_REMOTE_SIGNING_KEY=" + keys_.string() + ".key");
    spec.env_overrides.push_back("KCACHE_TRUSTED_KEYS=" + keys_.string() + ".pub");
    auto r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(120));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // a suspect verdict
    EXPECT_NE(r.err.find("published 1 errata"), std::string::npos) << r.err;
    auto reader = remote::Client::open(test_settings(server_->url(), dir() / "reader"));
    ASSERT_TRUE(reader);
    auto held = errata::fetch_remote(**reader, running());
    ASSERT_TRUE(held) << held.error().message;
    ASSERT_EQ(held->size(), 1u);
    EXPECT_EQ((*held)[0].kernel, "dot");
}

TEST_F(ErrataRemote, ANodeAsksTheRemoteAgainOnlyAfterItsBreakerWindow) {
    ScopedEnv env({"KCACHE_FAULT_DRIVER=7.5-window"});
    Config c = node(validated_store("store"), CanaryPolicy::enforce, false);
    c.remote_breaker_window = std::chrono::milliseconds(2500);
    auto cache = Cache::open(c);
    ASSERT_TRUE(cache);
    // The node asks the remote between `start` and `asked_by` (its first request).
    const auto start = std::chrono::steady_clock::now();
    Program first = cache->program(context_, device_, dot());
    const auto asked_by = std::chrono::steady_clock::now();
    EXPECT_EQ(first.outcome().status, StatusCode::ok) << first.outcome().message;

    auto writer = remote::Client::open(test_settings(server_->url(), dir() / "writer"));
    ASSERT_TRUE(writer);
    ASSERT_TRUE(errata::publish_remote(**writer, running(), {dot_erratum("7.5-window", "")}));
    const std::string object = store::make_key(errata::remote_fields(running())).hex();
    EXPECT_TRUE(std::filesystem::exists(server_->object_file(object)));

    // Within the window the erratum is not known yet: the variant is served.
    ASSERT_LT(std::chrono::steady_clock::now() - start, c.remote_breaker_window)
        << "the first request took longer than the window; the test proves nothing";
    Program p = cache->program(context_, device_, dot({{"ls", "64"}}));
    EXPECT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    std::this_thread::sleep_until(asked_by + c.remote_breaker_window);
    p = cache->program(context_, device_, dot({{"dtype", "bf16"}}));
    EXPECT_EQ(p.outcome().status, StatusCode::driver_suspect) << p.outcome().message;
    std::size_t asked = 0;
    for (const std::string& line : server_->requests()) {
        asked += line.rfind("GET ", 0) == 0 && line.find(object) != std::string::npos;
    }
    EXPECT_EQ(asked, 3u);  // once per window by the node, once by the writer before its PUT
}

}  // namespace
}  // namespace kcache::test
