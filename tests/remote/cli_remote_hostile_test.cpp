// The CLI and the remote tier when the server is down or hostile: warm's
// exit code follows KCACHE_REMOTE_REQUIRED, push replaces what only looks
// like the object, a server that asks to be left alone is left alone, and
// doctor checks what the server gives back.

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "kcache/remote/envelope.hpp"
#include "kcache/store/key.hpp"
#include "kcache/store/store.hpp"
#include "remote_support.hpp"
#include "signed_cli.hpp"

namespace kcache::test {
namespace {

class RemoteCliHostile : public SignedCliTest {
  protected:
    void SetUp() override {
        SignedCliTest::SetUp();
        server_ = start_nginx(dir() / "nginx");
        ASSERT_TRUE(server_);
    }
    // Puts `n` made-up entries into the user store (no device needed).
    void fill(int n) {
        auto store = store::Store::open(store_dir());
        ASSERT_TRUE(store.ok());
        for (int i = 0; i < n; ++i) {
            ASSERT_TRUE(store->put(made_up_fields(i), made_up_bytes(i), made_up_provenance()).ok());
        }
    }
    std::filesystem::path object(int i) const {
        return server_->object_file(store::make_key(made_up_fields(i)).hex());
    }
    CliRun push(const std::string& base, const std::vector<std::string>& more = {}) {
        std::vector<std::string> env{"KCACHE_REMOTE=" + base, "KCACHE_REMOTE_BREAKER_MS=1000"};
        env.insert(env.end(), more.begin(), more.end());
        return kcache({"push", "--json"}, env);
    }
    std::optional<NginxServer> server_;
};

// Nothing fails because of the remote tier unless KCACHE_REMOTE_REQUIRED says so.
TEST_F(RemoteCliHostile, WarmWithARemoteThatIsDownExitsZeroUnlessRequired) {
    const std::string down = "KCACHE_REMOTE=http://127.0.0.1:" + std::to_string(free_port());
    const CliRun warm = kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"}, {down});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    ASSERT_GE(warm.json()["built"], 1);
    EXPECT_EQ(warm.json()["failed"], 0);
    EXPECT_EQ(warm.json()["remote_uploads"], 0);
    EXPECT_GE(warm.json()["remote_upload_failures"], 1) << warm.out;

    const std::string fresh = "KCACHE_DIR=" + (dir() / "fresh").string();
    const CliRun text = kcache({"warm", "--kernels", "dot", "--dtypes", "f32"}, {down, fresh});
    EXPECT_EQ(text.code, 0) << text.out << text.err;
    EXPECT_NE(text.out.find("failed (not an error without KCACHE_REMOTE_REQUIRED)"),
              std::string::npos)
        << text.out;

    const std::string required = "KCACHE_DIR=" + (dir() / "required").string();
    const CliRun strict = kcache({"warm", "--kernels", "dot", "--dtypes", "f32"},
                                 {down, required, "KCACHE_REMOTE_REQUIRED=1"});
    EXPECT_EQ(strict.code, 1) << strict.out << strict.err;

    // push's job is uploading: its failures are errors without REQUIRED.
    EXPECT_EQ(kcache({"push"}, {down}).code, 1);
}

// A server that refuses writes (403 to PUT): warm and push say so, once,
// with how many uploads it refused.
TEST_F(RemoteCliHostile, UploadsARefusingServerTurnsAwayAreReportedOnceWithTheReason) {
    NginxOptions refusing;
    refusing.read_only = true;
    auto ro = start_nginx(dir() / "refusing", refusing);
    ASSERT_TRUE(ro);
    const std::string base = "KCACHE_REMOTE=" + ro->url();
    const CliRun warm = kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"}, {base});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    const int failed = warm.json()["remote_upload_failures"];
    ASSERT_GE(failed, 1) << warm.out;
    ASSERT_EQ(warm.json()["remote_upload_notes"].size(), 1u) << warm.out;
    EXPECT_EQ(warm.json()["remote_upload_notes"][0]["count"], failed);
    EXPECT_NE(warm.json()["remote_upload_notes"][0]["reason"].get<std::string>().find(
                  "refused by the server (HTTP 403)"),
              std::string::npos)
        << warm.out;
    const CliRun push = kcache({"push"}, {base});
    EXPECT_EQ(push.code, 1) << push.out << push.err;
    EXPECT_NE(push.err.find(": refused by the server (HTTP 403)"), std::string::npos) << push.err;
}

// A truncated object, an HTML page and a HEAD that says yes to everything
// are not the object: push uploads it instead of counting it present.
TEST_F(RemoteCliHostile, PushReplacesWhatOnlyLooksLikeTheObject) {
    fill(2);
    CliRun first = push(server_->url());
    ASSERT_EQ(first.code, 0) << first.err;
    EXPECT_EQ(first.json()["uploaded"], 2);
    const auto whole = std::filesystem::file_size(object(0));
    std::filesystem::resize_file(object(0), whole - 7);
    std::ofstream(object(1), std::ios::trunc) << "<html>not found</html>\n";
    CliRun again = push(server_->url());
    ASSERT_EQ(again.code, 0) << again.err;
    EXPECT_EQ(again.json()["replaced"], 2) << again.out;
    EXPECT_EQ(again.json()["already present"], 0);
    EXPECT_EQ(std::filesystem::file_size(object(0)), whole);
    CliRun third = push(server_->url());
    EXPECT_EQ(third.json()["already present"], 2) << third.out << third.err;

    const CliRun html = push(server_->html_url());
    EXPECT_EQ(html.json()["already present"], 0) << html.out << html.err;
    EXPECT_EQ(html.json()["replaced"], 2) << html.out << html.err;

    std::filesystem::remove_all(server_->root() / "kcache" / "v1");
    const CliRun liar = push(server_->liar_url());
    ASSERT_EQ(liar.code, 0) << liar.err;
    EXPECT_EQ(liar.json()["already present"], 0) << liar.out;
    EXPECT_EQ(liar.json()["uploaded"], 2) << liar.out;
    EXPECT_TRUE(std::filesystem::exists(object(0)));
    EXPECT_TRUE(std::filesystem::exists(object(1)));
}

// 429, or 403 with Retry-After: one request, then the node leaves the
// server alone for the time it asked, across runs.
TEST_F(RemoteCliHostile, PushStopsAtAServerThatAsksToBeLeftAlone) {
    fill(3);
    for (const std::string& base : {server_->busy_url(), server_->denied_url()}) {
        for (const auto& mark : down_marks(store_dir())) {
            std::filesystem::remove(mark);
        }
        const std::size_t before = server_->requests().size();
        const CliRun r = push(base);
        EXPECT_EQ(r.code, 1) << r.out << r.err;
        EXPECT_EQ(r.json()["failed"], 3) << r.out;
        EXPECT_EQ(server_->requests().size(), before + 1) << base << "\n" << r.err;
        const CliRun next = push(base);
        EXPECT_EQ(next.code, 1);
        EXPECT_EQ(server_->requests().size(), before + 1) << base << "\n" << next.err;
        EXPECT_NE(next.err.find("circuit breaker"), std::string::npos) << next.err;
    }
}

// doctor's probe checks what comes back, not only the status.
TEST_F(RemoteCliHostile, DoctorCallsAServerThatServesPagesUnhealthy) {
    auto levels = [&](const std::string& base, const std::vector<std::string>& more) {
        std::vector<std::string> env{"KCACHE_REMOTE=" + base};
        env.insert(env.end(), more.begin(), more.end());
        const CliRun r = kcache({"doctor", "--json", "--timeout", "5s"}, env);
        std::map<std::string, std::string> out;
        for (const auto& f : r.json()) {
            if (f["section"] == "remote") {
                const std::string name = f["name"];
                out[name.substr(0, name.find(' '))] =
                    f["level"].get<std::string>() + ": " + f["value"].get<std::string>();
            }
        }
        return std::pair(r.code, out);
    };
    auto [html_code, html] = levels(server_->html_url(), {"KCACHE_REMOTE_READONLY=1"});
    EXPECT_EQ(html_code, 1);  // a problem (not only this one on every machine)
    EXPECT_EQ(html["GET"].rfind("problem", 0), 0u) << html["GET"];
    EXPECT_NE(html["GET"].find("not a kcache object store"), std::string::npos) << html["GET"];
    auto [liar_code, liar] = levels(server_->liar_url(), {});
    EXPECT_EQ(liar_code, 1);
    EXPECT_EQ(liar["PUT"].rfind("problem", 0), 0u) << liar["PUT"];
    EXPECT_NE(liar["PUT"].find("does not give back"), std::string::npos) << liar["PUT"];
    auto [ok_code, ok] = levels(server_->url(), {});
    EXPECT_EQ(ok.size(), 6u);  // uploads, signatures, GET, HEAD, PUT, DELETE
    for (const auto& [name, line] : ok) {
        EXPECT_EQ(line.rfind("ok", 0), 0u) << name << ": " << line;
    }
}

// pull runs the known-answer test of what it fetches before storing it: with
// signatures not required, a truncated binary and another variant's binary
// (it loads, then computes wrong numbers) under the keys of dot's f32
// variants are rejected, not stored, and pull never dies of the driver's signal.
TEST_F(RemoteCliHostile, PullStoresNoBinaryThatFailsItsKnownAnswerTest) {
    const CliRun warm = kcache({"warm", "--kernels", "dot", "--dtypes", "f32,f16", "--json"});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    auto built = store::Store::open(store_dir());
    ASSERT_TRUE(built.ok());
    auto listed = built->list();
    ASSERT_TRUE(listed.ok());
    std::vector<store::Entry> f32, f16;
    for (const store::EntryInfo& info : *listed) {
        auto entry = built->get(info.key);
        ASSERT_TRUE(entry.ok());
        const bool half = info.fields.kernel_name.find("dtype=f16") != std::string::npos;
        (half ? f16 : f32).push_back(std::move(*entry));
    }
    ASSERT_EQ(f32.size(), 2u);
    ASSERT_FALSE(f16.empty());
    store::Bytes truncated = f32[0].bytes;
    truncated.resize(truncated.size() / 2);
    const std::vector<std::pair<const store::Entry*, store::Bytes>> forged{{&f32[0], truncated},
                                                                           {&f32[1], f16[0].bytes}};
    for (const auto& [entry, bytes] : forged) {
        const auto object = server_->object_file(entry->info.key.hex());
        std::filesystem::create_directories(object.parent_path());
        const store::Bytes env =
            remote::encode_envelope(entry->info.fields, bytes, entry->info.provenance);
        std::ofstream(object, std::ios::binary)
            .write(reinterpret_cast<const char*>(env.data()),
                   static_cast<std::streamsize>(env.size()));
    }
    const auto fresh = dir() / "fresh";
    const CliRun pull = kcache({"pull", "--kernels", "dot", "--dtypes", "f32", "--json"},
                               {"KCACHE_REMOTE=" + server_->url(), "KCACHE_DIR=" + fresh.string(),
                                "KCACHE_REMOTE_REQUIRE_SIGNED=0"});
    EXPECT_EQ(pull.code, 1) << "exit code (-1: killed by a signal)\n" << pull.out << pull.err;
    EXPECT_EQ(pull.json()["rejected"], 2) << pull.out << pull.err;
    EXPECT_EQ(pull.json()["pulled"], 0) << pull.out;
    EXPECT_NE(pull.err.find("known-answer test"), std::string::npos) << pull.err;
    auto pulled = store::Store::open(fresh);
    ASSERT_TRUE(pulled.ok());
    EXPECT_TRUE(pulled->list()->empty()) << "a rejected binary was stored";
}

}  // namespace
}  // namespace kcache::test
