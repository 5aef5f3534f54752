// The CLI keeps its documented contract under hostile input that needs no
// OpenCL device: gc beside another writer, output names checked before any
// work, a --pack that is not one, an entry whose key does not match its
// fields, control characters from files, and every boolean setting.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <thread>

#include "cli_store_fixture.hpp"

namespace kcache::test {
namespace {

class CliContract : public CliStoreTest {
  protected:
    std::filesystem::path db() const { return store_dir() / "store.sqlite"; }
    std::vector<std::string> keys() {
        std::vector<std::string> out;
        for (const auto& e : kcache({"ls", "--json"}).json()) {
            out.push_back(e["key"].get<std::string>());
        }
        return out;
    }
    // Writes `text` as a config file and returns "KCACHE_CONFIG=<it>".
    std::string config(const std::string& name, const std::string& text) const {
        std::ofstream(dir() / name, std::ios::binary) << text;
        return "KCACHE_CONFIG=" + (dir() / name).string();
    }
};

// True when `text` holds a byte a terminal would act on (newline aside), a
// DEL, or a UTF-8 byte-order mark.
bool raw_controls(const std::string& text) {
    for (unsigned char c : text) {
        if ((c < 0x20 && c != '\n') || c == 0x7f) {
            return true;
        }
    }
    return text.find("\xef\xbb\xbf") != std::string::npos;
}

// Another process puts entries while gc runs: gc reports what it removed
// (nothing here), never a count that went below zero.
TEST_F(CliContract, GcCountsWhatItRemovedWhileAnotherProcessWrites) {
    fill(3);
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
    auto exec = [&](const char* sql) {
        char* err = nullptr;
        EXPECT_EQ(sqlite3_exec(raw, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
        sqlite3_free(err);
    };
    // Three more entries, written in a transaction that commits while gc runs.
    exec("BEGIN IMMEDIATE; CREATE TEMP TABLE t AS SELECT * FROM entries;");
    exec("UPDATE t SET id = id + 1000, key = printf('%064d', id + 1000);");
    exec("INSERT INTO blobs SELECT id + 1000, data FROM blobs;");
    exec("INSERT INTO entries SELECT * FROM t;");
    CliRun gc;
    std::thread run([&] { gc = kcache({"gc", "--older-than", "30d", "--json"}); });
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    exec("COMMIT");
    run.join();
    sqlite3_close(raw);
    ASSERT_EQ(gc.code, 0) << gc.err;
    EXPECT_EQ(gc.json()["removed"], 0) << gc.out;
    EXPECT_EQ(gc.json()["freed_bytes"], 0) << gc.out;
    const CliRun all = kcache({"gc", "--max-size", "1", "--json"});
    EXPECT_EQ(all.json()["removed"], 6) << all.out;
    EXPECT_NE(kcache({"gc", "--max-size", "1"}).out.find("removed 0 entries, freed 0 B"),
              std::string::npos);
}

TEST_F(CliContract, EmptyOutputNamesAreUsageErrorsBeforeAnyWork) {
    fill(1);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"export", ""},
          {"prebuild", "--output", "", "--ocloc", "/nonexistent/ocloc"}}) {
        const CliRun r = kcache(args);
        EXPECT_EQ(r.code, 2) << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find("output file name is empty"), std::string::npos) << r.err;
    }
}

// A pack named on the command line that cannot be used is an error before
// the probe, never coverage judged as if there were no pack.
TEST_F(CliContract, DevicesRefusesAPackItCannotUse) {
    std::ofstream(dir() / "text.kcpack") << "not a pack\n";
    const std::vector<std::pair<std::string, int>> cases = {
        {(dir() / std::string(300, 'P')).string(), 3},
        {(dir() / "missing.kcpack").string(), 3},
        {(dir() / "text.kcpack").string(), 4}};
    for (const auto& [pack, code] : cases) {
        const CliRun r = kcache({"devices", "--pack", pack, "--timeout", "5s"});
        EXPECT_EQ(r.code, code) << pack << ": " << r.out << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
        EXPECT_NE(r.err.find("kcache devices: "), std::string::npos) << r.err;
    }
    EXPECT_NE(kcache({"devices", "--pack", cases[0].first}).err.find("too long"),
              std::string::npos);
}

// Rows altered outside kcache: get says what is wrong, not "not_found: ".
TEST_F(CliContract, GetSaysWhatIsWrongWithAnEntryWhoseKeyDoesNotMatchItsFields) {
    fill(2);
    const std::vector<std::string> k = keys();
    ASSERT_EQ(k.size(), 2u);
    raw_sql(db(), "UPDATE entries SET build_options = build_options || ' -DALTERED' WHERE key = '" +
                      k[0] + "'");
    const CliRun altered = kcache({"get", k[0], "--output", (dir() / "out0").string()});
    EXPECT_EQ(altered.code, 4) << altered.err;
    EXPECT_NE(altered.err.find("is damaged: its fields hash to key"), std::string::npos)
        << altered.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "out0"));

    raw_sql(db(), "UPDATE entries SET key = upper(key) WHERE key = '" + k[1] + "'");
    const CliRun unreadable = kcache({"get", k[1].substr(0, 12), "--info"});
    EXPECT_EQ(unreadable.code, 4) << unreadable.err;
    EXPECT_NE(unreadable.err.find("is listed but no row has that key"), std::string::npos)
        << unreadable.err;
}

// ESC, BEL and a byte-order mark from a config file never reach the
// terminal raw: in error messages, and in what a command prints as text.
TEST_F(CliContract, ControlCharactersFromFilesAreEscapedInEveryMessage) {
    for (const auto& [name, text, shown] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"bom", "\xef\xbb\xbf# a comment\n", "\\xef\\xbb\\xbf"},
             {"esc", "max_size = 1\x1b[31mG\x07\n", "\\x1b[31mG\\x07"},
             {"key", "dir\x1b]0;title\x07 = /tmp/x\n", "\\x1b]0;title\\x07"}}) {
        const CliRun r = kcache({"stats"}, {config(name, text)});
        EXPECT_EQ(r.code, 2) << name << ": " << r.err;
        EXPECT_FALSE(raw_controls(r.err)) << name << ": " << r.err;
        EXPECT_NE(r.err.find(shown), std::string::npos) << name << ": " << r.err;
    }
    // A value that is valid but carries controls, shown by a command as text.
    const std::string odd = (dir() / "s\x1b[2Jtore\xe2\x80\xae").string();
    const CliRun stats = kcache({"stats"}, {"KCACHE_DIR=" + odd});
    ASSERT_EQ(stats.code, 0) << stats.err;
    EXPECT_FALSE(raw_controls(stats.out)) << stats.out;
    EXPECT_NE(stats.out.find("s\\x1b[2Jtore\\xe2\\x80\\xae"), std::string::npos) << stats.out;
    // A stored name with controls: escaped as text, exact in JSON.
    fill(1);
    raw_sql(db(), "UPDATE entries SET kernel_name = 'dot' || char(27) || '[31m' || char(7)");
    const CliRun ls = kcache({"ls"});
    EXPECT_FALSE(raw_controls(ls.out + ls.err)) << ls.out;
    EXPECT_NE(ls.out.find("dot\\x1b[31m\\x07"), std::string::npos) << ls.out;
    EXPECT_EQ(kcache({"ls", "--json"}).json()[0]["kernel"], "dot\x1b[31m\x07");
}

// A namespace name that is not one is a usage error naming the setting, from
// the environment and from the file.
TEST_F(CliContract, ABadRemoteNamespaceNamesTheSetting) {
    for (const std::string bad : {"Team-A", "a..b", "a,a", "team a"}) {
        const CliRun e = kcache({"stats"}, {"KCACHE_REMOTE_NAMESPACE=" + bad});
        EXPECT_EQ(e.code, 2) << bad;
        EXPECT_NE(e.err.find("KCACHE_REMOTE_NAMESPACE=\""), std::string::npos) << e.err;
        const CliRun f = kcache({"stats"}, {config("c", "remote_namespace = " + bad + "\n")});
        EXPECT_EQ(f.code, 2) << bad;
        EXPECT_NE(f.err.find("remote_namespace: namespace"), std::string::npos) << f.err;
    }
    EXPECT_EQ(kcache({"stats"}, {"KCACHE_REMOTE_NAMESPACE=team-a,platform"}).code, 0);
}

// Every boolean setting takes the same words, from the environment and the
// file, and the message lists exactly those words.
TEST_F(CliContract, EveryBooleanSettingTakesTheWordsItsMessageLists) {
    const std::string words =
        "expected 1, true, yes or on (enabled); 0, false, no, off or an empty value (disabled)";
    const std::vector<std::pair<std::string, std::string>> flags = {
        {"disable", "KCACHE_DISABLE"},
        {"readonly", "KCACHE_READONLY"},
        {"remote_readonly", "KCACHE_REMOTE_READONLY"},
        {"remote_netrc", "KCACHE_REMOTE_NETRC"},
        {"remote_required", "KCACHE_REMOTE_REQUIRED"},
        {"remote_allow_http_token", "KCACHE_REMOTE_ALLOW_HTTP_TOKEN"},
        {"remote_require_signed", "KCACHE_REMOTE_REQUIRE_SIGNED"},
        {"require_signed_packs", "KCACHE_REQUIRE_SIGNED_PACKS"}};
    const std::vector<std::string> accepted = {"1",     "true", "yes", "on", "0",
                                               "false", "no",   "off", ""};
    const std::vector<std::string> refused = {" 1", "1 ", "TRUE",   "Yes",
                                              "2",  "y",  "enable", "1\x1b"};
    for (const auto& [key, env] : flags) {
        for (const std::string& v : accepted) {
            const CliRun e = kcache({"stats", "--json"}, {env + "=" + v});
            EXPECT_EQ(e.err.find("configuration"), std::string::npos) << env << "=" << v << e.err;
            const CliRun f = kcache({"stats", "--json"}, {config("c", key + " = " + v + "\n")});
            EXPECT_EQ(f.err.find("configuration"), std::string::npos) << key << "=" << v << f.err;
        }
        for (const std::string& v : refused) {
            const CliRun e = kcache({"stats"}, {env + "=" + v});
            EXPECT_EQ(e.code, 2) << env << "='" << v << "'";
            EXPECT_NE(e.err.find(env + "=\""), std::string::npos) << e.err;
            EXPECT_NE(e.err.find(words), std::string::npos) << e.err;
            if (v.front() != ' ' && v.back() != ' ') {  // the file's grammar trims blanks
                const CliRun f = kcache({"stats"}, {config("c", key + " = " + v + "\n")});
                EXPECT_EQ(f.code, 2) << key << " = '" << v << "'";
                EXPECT_NE(f.err.find(words), std::string::npos) << f.err;
            }
        }
    }
}

}  // namespace
}  // namespace kcache::test
