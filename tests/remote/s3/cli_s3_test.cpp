// The CLI on an S3 bucket served by s3rver (tests/harness/s3_server.hpp says
// what it checks), started by each test: a warmer uploads, a node with an
// empty store builds nothing, a node with a wrong secret is refused by the
// server and compiles instead; the doctor says where the credentials came
// from and never prints the secret.

#include <gtest/gtest.h>

#include <fstream>

#include "cli_runner.hpp"
#include "remote_support.hpp"
#include "s3_server.hpp"

namespace kcache::test {
namespace {

class CliS3 : public CliTest {
  protected:
    void SetUp() override {
        CliTest::SetUp();
        ASSERT_TRUE(start_into(server_, S3Server::start(dir() / "s3rver")));
    }
    // The settings of a node of the bucket whose secret is `secret`, with
    // its store in `store`: the endpoint an attribute of the URL.
    std::vector<std::string> node(const std::string& store,
                                  const std::string& secret = S3Server::kSecret) {
        std::vector<std::string> env = signing_env(dir() / "keys");
        for (std::string e :
             {"KCACHE_REMOTE=s3://" + server_->bucket() + "/fleet?endpoint=" + server_->endpoint(),
              std::string("AWS_ACCESS_KEY_ID=") + S3Server::kAccessKeyId,
              "AWS_SECRET_ACCESS_KEY=" + secret, "KCACHE_DIR=" + (dir() / store).string()}) {
            env.push_back(std::move(e));
        }
        return env;
    }
    std::optional<S3Server> server_;
};

const std::vector<std::string> kWarm{"warm", "--kernels", "dot", "--dtypes", "f32", "--json"};

TEST_F(CliS3, AWarmerUploadsANodeBuildsNothingAWrongSecretCompilesInstead) {
    const CliRun warmer = kcache(kWarm, node("ci"));
    ASSERT_EQ(warmer.code, 0) << warmer.out << warmer.err;
    const int built = warmer.json()["built"];
    ASSERT_GE(built, 1);
    EXPECT_EQ(warmer.json()["remote_uploads"], built) << warmer.err;
    EXPECT_EQ(server_->count("PUT", 200), static_cast<std::size_t>(built));

    const CliRun cold = kcache(kWarm, node("cold"));
    ASSERT_EQ(cold.code, 0) << cold.out << cold.err;
    EXPECT_EQ(cold.json()["built"], 0);
    EXPECT_EQ(cold.json()["already_cached"], built);

    const std::string wrong = "a-secret-that-is-not-S3RVERs";
    const CliRun refused = kcache(kWarm, node("refused", wrong));
    ASSERT_EQ(refused.code, 0) << refused.out << refused.err;  // fail-open
    EXPECT_EQ(refused.json()["built"], built);
    EXPECT_EQ(refused.out.find(wrong), std::string::npos);
    EXPECT_EQ(refused.err.find(wrong), std::string::npos);
    const CliRun stats = kcache({"stats", "--json"}, node("refused", wrong));
    ASSERT_EQ(stats.code, 0) << stats.err;
    EXPECT_GE(stats.json()["remote"]["errors"], built);
    EXPECT_EQ(stats.json()["remote"]["hits"], 0);
    EXPECT_GE(server_->count("GET", 403), static_cast<std::size_t>(built));
}

// The doctor's findings as "name: value" per line, and whether any is a problem.
std::pair<std::string, bool> findings(const CliRun& run) {
    std::string text;
    bool problem = false;
    for (const auto& f : run.json()) {
        text += f["name"].get<std::string>() + ": " + f["value"].get<std::string>() + "\n";
        problem = problem || (f["section"] == "remote" && f["level"] == "problem");
    }
    return {text, problem};
}

TEST_F(CliS3, DoctorNamesWhereTheCredentialsCameFromNeverTheSecret) {
    const CliRun good = kcache({"doctor", "--json"}, node("store"));
    const auto [text, problem] = findings(good);
    EXPECT_NE(text.find("s3 credentials: S3RVER from the environment (AWS_ACCESS_KEY_ID, "
                        "AWS_SECRET_ACCESS_KEY)"),
              std::string::npos)
        << text;
    EXPECT_FALSE(problem) << text;  // every probe of the bucket passed

    const std::string wrong = "a-secret-that-is-not-S3RVERs";
    const CliRun bad = kcache({"doctor", "--json"}, node("store", wrong));
    const auto [bad_text, bad_problem] = findings(bad);
    EXPECT_TRUE(bad_problem) << bad_text;
    EXPECT_NE(bad_text.find("SignatureDoesNotMatch"), std::string::npos) << bad_text;
    EXPECT_EQ(bad.out.find(wrong), std::string::npos);
    EXPECT_EQ(bad.err.find(wrong), std::string::npos);
}

TEST_F(CliS3, TheEndpointVariableOfTheLastReleaseIsStillRead) {
    std::vector<std::string> env = node("old");
    for (std::string& e : env) {
        if (e.rfind("KCACHE_REMOTE=", 0) == 0) {
            e = "KCACHE_REMOTE=s3://" + server_->bucket() + "/fleet";
        }
    }
    env.push_back("KCACHE_REMOTE_S3_ENDPOINT=" + server_->endpoint());
    const CliRun warmer = kcache(kWarm, env);
    ASSERT_EQ(warmer.code, 0) << warmer.out << warmer.err;
    EXPECT_GE(warmer.json()["remote_uploads"], 1) << warmer.err;
    EXPECT_EQ(server_->count("PUT", 200), warmer.json()["remote_uploads"].get<std::size_t>());
}

TEST_F(CliS3, AUrlsCredentialsFileIsWhatTheDoctorNamesAndWhatSigns) {
    const auto file = dir() / "fleet-aws";
    std::ofstream(file) << "[ci]\naws_access_key_id = " << S3Server::kAccessKeyId
                        << "\naws_secret_access_key = " << S3Server::kSecret << "\n";
    std::vector<std::string> env = signing_env(dir() / "keys");
    env.push_back("KCACHE_DIR=" + (dir() / "store").string());
    env.push_back("KCACHE_REMOTE=s3://" + server_->bucket() + "/fleet?endpoint=" +
                  server_->endpoint() + "&profile=ci&credentials_file=" + file.string());
    const CliRun doctor = kcache({"doctor", "--json"}, env);
    const auto [text, problem] = findings(doctor);
    EXPECT_NE(text.find("s3 credentials: S3RVER from " + file.string() + " [ci]"),
              std::string::npos)
        << text;
    EXPECT_FALSE(problem) << text;
    const CliRun warmer = kcache(kWarm, env);
    ASSERT_EQ(warmer.code, 0) << warmer.out << warmer.err;
    EXPECT_GE(server_->count("PUT", 200), 1u);
    env.back() += "x";  // no such file: a clear error, named by the setting
    const CliRun broken = kcache({"doctor", "--json"}, env);
    EXPECT_NE(broken.out.find(file.string() + "x"), std::string::npos) << broken.out << broken.err;
}

}  // namespace
}  // namespace kcache::test
