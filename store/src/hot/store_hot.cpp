// Store::get_hot and the checks that keep every answering hot copy backed
// by its entry (docs/design.md, "Hot copies"), at a hit and in `kcache verify`.

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "handover.hpp"
#include "hot_copies.hpp"
#include "kcache/common/log.hpp"
#include "kcache/common/sha256.hpp"
#include "store_impl.hpp"

namespace kcache::store {
namespace {

// What a copy must match: its entry's raw size and checksum; and whether
// the entry may have a copy at all (trusted_without_check).
struct EntryMark {
    std::uint64_t raw_size = 0;
    std::vector<std::uint8_t> checksum;
    bool trusted = true;
};

// Lock held, connection open: the mark of the entry under `key_hex`, or
// nullopt when there is none.
sql::Res<std::optional<EntryMark>> entry_mark_locked(Store::Impl& s, const std::string& key_hex) {
    return sql::with_retry(s.retry, [&]() -> sql::Res<std::optional<EntryMark>> {
        auto stmt = s.db.cached(
            "SELECT raw_size, checksum, origin, verification FROM entries WHERE key = ?");
        if (!stmt.ok()) {
            return fail(stmt.error());
        }
        auto bound = stmt.value()->bind(1, key_hex);
        auto row = bound.ok() ? stmt.value()->step() : sql::Res<bool>(fail(bound.error()));
        if (!row.ok()) {
            return fail(row.error());
        }
        if (!row.value()) {
            return std::optional<EntryMark>();
        }
        auto sum = stmt.value()->blob(1);
        const bool trusted =
            trusted_without_check(static_cast<Origin>(stmt.value()->int64(2)),
                                  static_cast<Verification>(stmt.value()->int64(3)));
        return std::optional<EntryMark>(EntryMark{
            static_cast<std::uint64_t>(stmt.value()->int64(0)), {sum.begin(), sum.end()}, trusted});
    });
}

bool same_checksum(const std::vector<std::uint8_t>& stored, const Checksum& sum) {
    return stored.size() == sum.size() && std::memcmp(stored.data(), sum.data(), sum.size()) == 0;
}

void log_unbacked(const Store::Impl& s, const std::string& key_hex, const char* what) {
    // The copy is only a copy: removing it is a repair done, nothing to act on.
    logging::info("hot copy " + key_hex + " of " + s.db_path.string() + " " + what + ": removed");
}

// Lock held, inside a write transaction, or on a read-only handle: removes
// the copy of `key_hex` in `dir` unless it holds the bytes of its entry and
// that entry may have a copy (one imported and not checked may not). Under
// the write lock no put is midway (copies are written inside the put's
// transaction), so a copy found without its entry is one. With `serialized`
// empty, a copy whose entry exists is kept unread.
sql::Stat drop_unbacked(Store::Impl& s, const std::filesystem::path& dir,
                        const std::string& key_hex, std::string_view serialized) {
    auto mark = entry_mark_locked(s, key_hex);
    if (!mark.ok()) {
        return fail(mark.error());
    }
    const char* problem = nullptr;
    if (!mark.value()) {
        problem = hot::exists(dir, key_hex) ? "has no entry" : nullptr;
    } else if (!mark.value()->trusted) {
        problem =
            hot::exists(dir, key_hex) ? "belongs to an imported entry not checked here" : nullptr;
    } else if (!serialized.empty()) {
        const Key key{sha256(serialized)};
        auto found = hot::read(dir, s.hot_secret, key, serialized,
                               hot::file_size_for(serialized, mark.value()->raw_size));
        problem = found.oversize  ? "is larger than its entry"
                  : found.damaged ? "is damaged"
                  : found.copy && !same_checksum(mark.value()->checksum, found.copy->checksum)
                      ? "differs from its entry"
                      : nullptr;
    }
    if (problem != nullptr) {
        log_unbacked(s, key_hex, problem);
        hot::forget(dir, key_hex);
    }
    return Ok{};
}

// Lock held, inside a write transaction: removes the copy of `key_hex` that
// answered (checksum `read`) or failed its check (`read` empty) before the
// connection opened, unless its entry exists, may have a copy and holds the
// bytes read.
sql::Stat confirm_copy(Store::Impl& s, const std::string& key_hex,
                       const std::optional<Checksum>& read) {
    auto mark = entry_mark_locked(s, key_hex);
    if (!mark.ok()) {
        return fail(mark.error());
    }
    const char* problem = !mark.value()            ? "has no entry"
                          : !mark.value()->trusted ? "belongs to an imported entry not checked here"
                          : !read                  ? "is damaged"
                          : !same_checksum(mark.value()->checksum, *read) ? "differs from its entry"
                                                                          : nullptr;
    if (problem != nullptr && hot::exists(s.hot_dir, key_hex)) {
        log_unbacked(s, key_hex, problem);
        hot::forget(s.hot_dir, key_hex);
    }
    return Ok{};
}

}  // namespace

void Store::Impl::drop_unbacked_copy_locked(const std::filesystem::path& copies,
                                            const std::string& key_hex,
                                            std::string_view serialized) {
    if (mode == OpenMode::read_only) {
        // No write lock to take: a copy beside a missing or damaged entry
        // goes at once (at worst a copy being written with its entry now is
        // lost, and made again at a later hit).
        hot::forget(copies, key_hex);
        return;
    }
    // Best effort: a copy that cannot be checked now is checked at the next miss.
    (void)sql::with_retry(retry, [&]() -> sql::Stat {
        auto txn = sql::Transaction::begin(db);
        if (!txn.ok()) {
            return fail(txn.error());
        }
        auto st = drop_unbacked(*this, copies, key_hex, serialized);
        return st.ok() ? txn->commit() : st;
    });
}

std::optional<HotBytes> Store::read_hot(const KeyFields& fields, HotBytes::Memory memory) {
    const std::string record = serialize_key_fields(fields);
    return read_hot(Key{sha256(record)}, record, memory);
}

std::optional<HotBytes> Store::read_hot(const Key& key, std::string_view serialized,
                                        HotBytes::Memory memory) {
    Impl& s = *impl_;
    std::filesystem::path dir;
    hot::Secret secret{};
    bool connected = false;
    {
        std::lock_guard lock(s.mu);
        dir = s.hot_dir;
        secret = s.hot_secret;
        connected = s.db.get() != nullptr;
    }
    if (dir.empty()) {
        return std::nullopt;
    }
    const std::string key_hex = key.hex();
    std::optional<EntryMark> mark;
    if (connected) {
        // With the connection open, a copy is checked against its entry
        // first: one indexed read, and no copy is read past the entry's size.
        std::lock_guard lock(s.mu);
        auto found = entry_mark_locked(s, key_hex);
        if (!found.ok()) {
            return std::nullopt;  // get() reports what is wrong
        }
        if (!found.value() || !found.value()->trusted) {
            if (hot::exists(dir, key_hex)) {
                s.drop_unbacked_copy_locked(dir, key_hex, serialized);
            }
            return std::nullopt;
        }
        mark = std::move(found.value());
    }
    // Before the connection opens (a first hit), bounded by the copies'
    // bound and checked against the entry at the next write-back.
    auto found = hot::read(
        dir, secret, key, serialized,
        mark ? hot::file_size_for(serialized, mark->raw_size) : s.policy.max_hot_bytes, memory);
    std::lock_guard lock(s.mu);
    if (mark && (found.oversize || found.damaged ||
                 (found.copy && !same_checksum(mark->checksum, found.copy->checksum)))) {
        // Damaged, not this entry's copy, or the entry and its copy were
        // just replaced: decided, and removed, under the write lock.
        s.drop_unbacked_copy_locked(dir, key_hex, serialized);
        return std::nullopt;
    }
    if (!mark && (found.copy || found.damaged)) {
        // Checked against its entry, and a damaged copy removed, at the
        // next write-back: no write lock is taken on a first hit.
        s.unconfirmed.emplace(
            key_hex, found.copy ? std::optional<Checksum>(found.copy->checksum) : std::nullopt);
    }
    if (!found.copy) {
        return std::nullopt;
    }
    s.count_hit(key_hex);
    return std::move(found.copy->bytes);
}

std::optional<Bytes> Store::get_hot(const KeyFields& fields) {
    auto read = read_hot(fields, HotBytes::Memory::kept);
    if (!read) {
        return std::nullopt;
    }
    return read->take();
}

Result<Store::HotCheck, StoreError> Store::check_hot_copies() {
    auto listed = list();
    if (!listed.ok()) {
        return fail(listed.error());
    }
    std::unordered_map<std::string, std::string> serialized;
    for (const EntryInfo& e : listed.value()) {
        serialized.emplace(e.key.hex(), serialize_key_fields(e.fields));
    }
    Impl& s = *impl_;
    std::lock_guard lock(s.mu);
    HotCheck report;
    if (s.mode == OpenMode::read_only || s.hot_dir.empty()) {
        return report;
    }
    for (const std::string& key_hex : hot::list(s.hot_dir)) {
        ++report.checked;
        auto it = serialized.find(key_hex);
        // An entry stored since the listing keeps its copy unread.
        s.drop_unbacked_copy_locked(s.hot_dir, key_hex,
                                    it == serialized.end() ? std::string_view() : it->second);
        report.removed += hot::exists(s.hot_dir, key_hex) ? 0 : 1;
    }
    // A writer writes its temporary in milliseconds: ten minutes is long gone.
    report.leftovers = hot::remove_leftovers(s.hot_dir, std::chrono::minutes(10));
    return report;
}

sql::Stat Store::Impl::confirm_hot_locked() {
    for (const auto& [key_hex, read] : unconfirmed) {
        if (auto st = confirm_copy(*this, key_hex, read); !st.ok()) {
            return st;
        }
    }
    unconfirmed.clear();
    return Ok{};
}

bool Store::Impl::hand_over_locked() {
    if (mode != OpenMode::read_write || db.get() != nullptr || opening.joinable() ||
        hot_dir.empty()) {
        return false;
    }
    if (nothing_to_write_back()) {
        return true;
    }
    if (hot::count_handovers(hot_dir) >= hot::kMaxHandovers) {
        return false;
    }
    hot::Handover h;
    for (const auto& [key_hex, touch] : touches) {
        h.hits.push_back({key_hex, touch.last_use, touch.hits});
    }
    h.copies.assign(unconfirmed.begin(), unconfirmed.end());
    h.counts = pending;
    if (!hot::write_handover(hot_dir, h)) {
        return false;
    }
    touches.clear();
    unconfirmed.clear();
    pending = TierStats{"user", 0, {}};
    return true;
}

bool Store::Impl::take_handovers_locked() {
    if (mode != OpenMode::read_write || hot_dir.empty()) {
        return false;
    }
    const auto taken = hot::take_handovers(hot_dir);
    for (const hot::Handover& h : taken) {
        for (const hot::Handover::Hit& hit : h.hits) {
            Touch& t = touches[hit.key_hex];
            t.last_use = std::max(t.last_use, hit.last_use);
            t.hits += hit.hits;
        }
        for (const auto& [key_hex, sum] : h.copies) {
            unconfirmed.emplace(key_hex, sum);  // a check this process made stands
        }
        pending.hits += h.counts.hits;
        for (std::size_t r = 0; r < kMissReasonCount; ++r) {
            pending.misses[r] += h.counts.misses[r];
        }
    }
    return !taken.empty();
}

}  // namespace kcache::store
