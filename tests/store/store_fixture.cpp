#include "store_fixture.hpp"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>

#include "kcache/common/log.hpp"
#include "kcache/store/codec.hpp"

namespace kcache::test {
namespace {

struct DbCloser {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtCloser {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};

std::unique_ptr<sqlite3, DbCloser> raw_open(const std::filesystem::path& db) {
    sqlite3* raw = nullptr;
    int rc = sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    std::unique_ptr<sqlite3, DbCloser> out(raw);
    EXPECT_EQ(rc, SQLITE_OK) << db;
    sqlite3_busy_timeout(raw, 10000);
    return out;
}

std::mutex g_log_mu;
std::vector<std::string> g_log;

}  // namespace

ks::Bytes binary_like(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    ks::Bytes out;
    out.reserve(n);
    // A small vocabulary of 8-byte "instructions", like an ISA's common encodings.
    std::vector<std::uint64_t> vocab(64);
    for (auto& w : vocab) {
        w = rng();
    }
    while (out.size() < n) {
        std::uint64_t choice = rng() % 16;
        std::uint64_t word = choice < 11   ? vocab[rng() % vocab.size()]  // common opcode
                             : choice < 14 ? (rng() & 0xffff)             // small immediates
                                           : rng();                       // noise
        for (int b = 0; b < 8 && out.size() < n; ++b) {
            out.push_back(static_cast<std::uint8_t>(word >> (8 * b)));
        }
    }
    return out;
}

std::string raw_sql(const std::filesystem::path& db, const std::string& sql) {
    auto h = raw_open(db);
    std::string first;
    const char* p = sql.c_str();
    while (*p != '\0') {
        sqlite3_stmt* raw = nullptr;
        const char* tail = nullptr;
        int rc = sqlite3_prepare_v2(h.get(), p, -1, &raw, &tail);
        std::unique_ptr<sqlite3_stmt, StmtCloser> s(raw);
        EXPECT_EQ(rc, SQLITE_OK) << sqlite3_errmsg(h.get()) << " in " << p;
        if (rc != SQLITE_OK || raw == nullptr) {
            break;
        }
        while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
            if (first.empty() && sqlite3_column_text(raw, 0) != nullptr) {
                first = reinterpret_cast<const char*>(sqlite3_column_text(raw, 0));
            }
        }
        EXPECT_EQ(rc, SQLITE_DONE) << sqlite3_errmsg(h.get()) << " in " << p;
        p = tail;
    }
    return first;
}

void raw_sql_blob(const std::filesystem::path& db, const std::string& sql,
                  const std::vector<std::uint8_t>& blob) {
    auto h = raw_open(db);
    sqlite3_stmt* raw = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(h.get(), sql.c_str(), -1, &raw, nullptr), SQLITE_OK)
        << sqlite3_errmsg(h.get());
    std::unique_ptr<sqlite3_stmt, StmtCloser> s(raw);
    static const std::uint8_t kEmpty = 0;
    ASSERT_EQ(sqlite3_bind_blob64(raw, 1, blob.empty() ? &kEmpty : blob.data(), blob.size(),
                                  SQLITE_TRANSIENT),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(raw), SQLITE_DONE) << sqlite3_errmsg(h.get());
}

std::vector<std::uint8_t> raw_blob(const std::filesystem::path& db, const std::string& sql) {
    auto h = raw_open(db);
    sqlite3_stmt* raw = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(h.get(), sql.c_str(), -1, &raw, nullptr), SQLITE_OK);
    std::unique_ptr<sqlite3_stmt, StmtCloser> s(raw);
    std::vector<std::uint8_t> out;
    if (raw != nullptr && sqlite3_step(raw) == SQLITE_ROW) {
        auto* p = static_cast<const std::uint8_t*>(sqlite3_column_blob(raw, 0));
        out.assign(p, p + sqlite3_column_bytes(raw, 0));
    }
    return out;
}

std::vector<std::filesystem::path> hot_copies(const std::filesystem::path& store_dir) {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(store_dir / "hot", ec), end;
         !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file() && it->path().filename().string().size() == 64) {
            out.push_back(it->path());
        }
    }
    return out;
}

std::size_t damage_hot_copies(const std::filesystem::path& store_dir) {
    const auto copies = hot_copies(store_dir);
    for (const auto& p : copies) {
        std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(-1, std::ios::end);
        const char last = static_cast<char>(f.get());
        f.seekp(-1, std::ios::end);
        f.put(static_cast<char>(last ^ 0x5a));
    }
    return copies.size();
}

void craft_hot_copy(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
    // magic 8, key_len 8, raw_size 8, checksum 16, tag 32, key, bytes
    // (store/src/hot/hot_copies.hpp).
    const std::string old = file_bytes(path);
    ASSERT_GE(old.size(), 72u);
    std::uint64_t key_len = 0;
    std::memcpy(&key_len, old.data() + 8, 8);  // little-endian, as this host
    const std::uint64_t size = bytes.size();
    const ks::Checksum sum = ks::checksum_of(bytes);
    std::string crafted = old.substr(0, 16);
    crafted.append(reinterpret_cast<const char*>(&size), 8);
    crafted.append(reinterpret_cast<const char*>(sum.data()), sum.size());
    crafted.append(old.substr(40, 32 + key_len));
    crafted.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << crafted;
}

std::string file_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string run_as_user(unsigned uid, const std::function<std::string()>& body) {
    int fds[2];
    if (::pipe(fds) != 0) {
        return "pipe failed";
    }
    pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        std::string msg;
        if (::setgroups(0, nullptr) != 0 || ::setgid(uid) != 0 || ::setuid(uid) != 0) {
            msg = "could not drop to uid " + std::to_string(uid);
        } else if (::geteuid() != uid) {
            msg = "still running as uid " + std::to_string(::geteuid());
        } else {
            msg = body();
        }
        (void)!::write(fds[1], msg.data(), msg.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string msg;
    char buf[512];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) {
        msg.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        msg += " (child died, status " + std::to_string(status) + ")";
    }
    return msg;
}

LogCapture::LogCapture() {
    {
        std::lock_guard lock(g_log_mu);
        g_log.clear();
    }
    kcache::logging::set_sink(
        [](kcache::logging::Level, std::string_view m) {
            std::lock_guard lock(g_log_mu);
            g_log.emplace_back(m);
        },
        kcache::logging::Level::debug);
}

LogCapture::~LogCapture() {
    kcache::logging::set_sink({});
}

std::vector<std::string> LogCapture::messages() const {
    std::lock_guard lock(g_log_mu);
    return g_log;
}

bool LogCapture::contains(const std::string& needle) const {
    for (const auto& m : messages()) {
        if (m.find(needle) != std::string::npos) {
            return true;
        }
    }
    return false;
}

}  // namespace kcache::test

ks::Store Store::open_store(ks::Policy policy) {
    auto s = ks::Store::open(store_dir(), std::move(policy));
    if (!s.ok()) {
        ADD_FAILURE() << "Store::open: " << s.error().message;
        std::abort();
    }
    return std::move(s).value();
}
