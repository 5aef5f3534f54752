// The CLI and the remote tier, against a real nginx: warm uploads, push skips
// what the server has, pull verifies and stores, stats counts, explain asks,
// doctor probes, and push refuses a remote it may not write.

#include <gtest/gtest.h>

#include "kcache/sign/signature.hpp"
#include "remote_support.hpp"
#include "signed_cli.hpp"

namespace kcache::test {
namespace {

class RemoteCli : public SignedCliTest {
  protected:
    void SetUp() override {
        SignedCliTest::SetUp();
        server_ = start_nginx(dir() / "nginx");
        ASSERT_TRUE(server_);
    }
    std::string remote() const { return "KCACHE_REMOTE=" + server_->url(); }
    std::optional<NginxServer> server_;
};

TEST_F(RemoteCli, WarmUploadsPushSkipsWhatIsThereAndPullVerifies) {
    const CliRun warm =
        kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote()});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    const int built = warm.json()["built"];
    ASSERT_GE(built, 1);
    EXPECT_EQ(warm.json()["remote_uploads"], built);
    EXPECT_EQ(warm.json()["remote_upload_failures"], 0);
    EXPECT_EQ(server_->count("PUT"), static_cast<std::size_t>(built));

    const CliRun push = kcache({"push", "--json"}, {remote()});
    ASSERT_EQ(push.code, 0) << push.err;
    EXPECT_EQ(push.json()["uploaded"], 0);
    EXPECT_EQ(push.json()["already present"], built);
    EXPECT_EQ(server_->count("PUT"), static_cast<std::size_t>(built));  // HEAD only

    const std::string other = "KCACHE_DIR=" + (dir() / "other").string();
    const CliRun pull =
        kcache({"pull", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote(), other});
    ASSERT_EQ(pull.code, 0) << pull.err;
    EXPECT_EQ(pull.json()["pulled"], built);
    EXPECT_EQ(pull.json()["failed"], 0);
    const CliRun again =
        kcache({"pull", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote(), other});
    EXPECT_EQ(again.json()["already local"], built);
    EXPECT_EQ(again.json()["pulled"], 0);
    const CliRun stats = kcache({"stats", "--json"}, {other});
    ASSERT_EQ(stats.code, 0) << stats.err;
    EXPECT_EQ(stats.json()["entries"], built);
    EXPECT_EQ(stats.json()["remote"]["hits"], built);

    const CliRun explain = kcache({"explain", "dot", "--json"},
                                  {remote(), "KCACHE_DIR=" + (dir() / "empty").string()});
    ASSERT_EQ(explain.code, 0) << explain.err;
    EXPECT_EQ(explain.json()[0]["state"], "miss");
    EXPECT_EQ(explain.json()[0]["remote"].get<std::string>().rfind("present at ", 0), 0u)
        << explain.out;
}

TEST_F(RemoteCli, CorruptObjectIsCountedAndNotStoredByPull) {
    ASSERT_EQ(kcache({"warm", "--kernels", "dot", "--dtypes", "f32"}, {remote()}).code, 0);
    for (const auto& e : std::filesystem::recursive_directory_iterator(server_->root())) {
        if (e.is_regular_file()) {
            std::filesystem::resize_file(e.path(), e.file_size() - 1);  // truncate every object
        }
    }
    const std::string other = "KCACHE_DIR=" + (dir() / "other").string();
    const CliRun pull =
        kcache({"pull", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote(), other});
    EXPECT_EQ(pull.code, 1) << pull.out;
    EXPECT_EQ(pull.json()["pulled"], 0);
    EXPECT_GE(pull.json()["failed"], 1);
    const CliRun stats = kcache({"stats", "--json"}, {other});
    EXPECT_EQ(stats.json()["entries"], 0);
    EXPECT_EQ(stats.json()["remote"]["corrupt"], pull.json()["failed"]);
}

TEST_F(RemoteCli, DoctorProbesWritesOnlyForWriters) {
    const CliRun writer = kcache({"doctor", "--json"}, {remote()});
    int ok = 0;
    for (const auto& f : writer.json()) {
        if (f["section"] == "remote") {
            EXPECT_EQ(f["level"], "ok") << f.dump();
            ++ok;
        }
    }
    EXPECT_EQ(ok, 6);  // uploads, signatures, GET, HEAD, PUT, DELETE
    EXPECT_EQ(server_->count("PUT"), 1u);
    const CliRun reader = kcache({"doctor", "--json"}, {remote(), "KCACHE_REMOTE_READONLY=1"});
    EXPECT_EQ(server_->count("PUT"), 1u);
    bool said = false;
    for (const auto& f : reader.json()) {
        said = said || (f["section"] == "remote" &&
                        f["value"].get<std::string>().find("read-only") != std::string::npos);
    }
    EXPECT_TRUE(said) << reader.out;
}

// Whether this node uploads, and why not, is one doctor line.
TEST_F(RemoteCli, DoctorSaysWhetherThisNodeUploadsAndWhyNot) {
    auto uploads = [](const CliRun& doctor) {
        for (const auto& f : doctor.json()) {
            if (f["section"] == "remote" && f["name"] == "uploads") {
                return f;
            }
        }
        return nlohmann::json();
    };
    const auto on = uploads(kcache({"doctor", "--json"}, {remote()}));
    ASSERT_FALSE(on.is_null());
    EXPECT_EQ(on["level"], "ok") << on.dump();
    EXPECT_EQ(on["value"].get<std::string>().rfind("on:", 0), 0u) << on.dump();
    const auto keyless = uploads(CliTest::kcache({"doctor", "--json"}, {remote()}));
    EXPECT_NE(keyless["value"].get<std::string>().find("no signing key"), std::string::npos)
        << keyless.dump();
    const auto reader =
        uploads(kcache({"doctor", "--json"}, {remote(), "KCACHE_REMOTE_READONLY=1"}));
    EXPECT_NE(reader["value"].get<std::string>().find("off: read-only"), std::string::npos)
        << reader.dump();
}

// Signed objects are required by default: a push without a key sends
// nothing and says what to set; doctor names the key that signs.
TEST_F(RemoteCli, PushWithoutASigningKeySaysHowToSetOneUp) {
    const CliRun push = CliTest::kcache({"push"}, {remote()});
    EXPECT_EQ(push.code, 2) << push.out << push.err;
    EXPECT_NE(push.err.find("KCACHE_REMOTE_SIGNING_KEY"), std::string::npos) << push.err;
    EXPECT_EQ(server_->count("PUT"), 0u);
    const CliRun doctor = kcache({"doctor", "--json"}, {remote()});
    bool named = false;
    for (const auto& f : doctor.json()) {
        named = named ||
                (f["name"] == "signatures" && f["value"].get<std::string>().find(store::key_id_hex(
                                                  test_signing_key().id)) != std::string::npos);
    }
    EXPECT_TRUE(named) << doctor.out;
}

// A warmer without a key says that it uploads nothing; a CI warmer
// (KCACHE_REMOTE_REQUIRED) stops before building.
TEST_F(RemoteCli, WarmWithoutASigningKeySaysNothingIsUploaded) {
    const CliRun strict = CliTest::kcache({"warm", "--kernels", "dot", "--dtypes", "f32"},
                                          {remote(), "KCACHE_REMOTE_REQUIRED=1"});
    EXPECT_EQ(strict.code, 2) << strict.out << strict.err;
    EXPECT_NE(strict.err.find("KCACHE_REMOTE_SIGNING_KEY"), std::string::npos) << strict.err;
    const CliRun warm =
        CliTest::kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote()});
    EXPECT_EQ(warm.code, 0) << warm.out << warm.err;
    EXPECT_NE(warm.err.find("KCACHE_REMOTE_SIGNING_KEY"), std::string::npos) << warm.err;
    EXPECT_GE(warm.json()["built"], 1);
    EXPECT_EQ(server_->count("PUT"), 0u);
    // The summary says why nothing went out, once, with how many.
    ASSERT_EQ(warm.json()["remote_upload_notes"].size(), 1u) << warm.out;
    EXPECT_EQ(warm.json()["remote_upload_notes"][0]["count"], warm.json()["built"]);
    EXPECT_NE(warm.json()["remote_upload_notes"][0]["reason"].get<std::string>().find(
                  "not sent: no signing key"),
              std::string::npos)
        << warm.out;
    const CliRun text = CliTest::kcache({"warm", "--kernels", "dot", "--dtypes", "f32"},
                                        {remote(), "KCACHE_DIR=" + (dir() / "text").string()});
    EXPECT_NE(text.out.find(" uploads: not sent: no signing key"), std::string::npos) << text.out;
}

TEST_F(RemoteCli, PushNeedsAWritableRemote) {
    EXPECT_EQ(kcache({"push"}).code, 2);
    const CliRun ro = kcache({"push"}, {remote(), "KCACHE_REMOTE_READONLY=1"});
    EXPECT_EQ(ro.code, 2);
    EXPECT_NE(ro.err.find("read-only"), std::string::npos) << ro.err;
    EXPECT_EQ(kcache({"pull"}, {"KCACHE_REMOTE=ftp://nowhere"}).code, 2);
}

}  // namespace
}  // namespace kcache::test
