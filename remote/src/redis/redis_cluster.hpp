#pragma once
// Redis Cluster routing on hiredis: which node serves a key. A key hashes
// to one of 16384 slots (CRC16 of the key, or of its hash tag, mod 16384);
// the slot map comes from CLUSTER SLOTS; a node that no longer serves a
// slot answers MOVED (the slot lives elsewhere now: the map is refreshed)
// or ASK (the slot is being migrated and this key has moved: ask the target
// once, after ASKING). Internal.

#include <hiredis/hiredis.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kcache/common/result.hpp"
#include "redis_url.hpp"

namespace kcache::remote {

inline constexpr int kClusterSlots = 16384;

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), as the cluster spec defines it.
std::uint16_t crc16(std::string_view data);

// The slot of `key`: of the text between the first '{' and the next '}'
// when that is not empty, else of the whole key.
int key_slot(std::string_view key);

// One range of a CLUSTER SLOTS reply: its slots and the master serving them.
struct SlotRange {
    int first = 0;
    int last = 0;
    RedisNode master;
};

// The ranges of a CLUSTER SLOTS `reply`; a node given as "" (an unknown
// endpoint) is `asked`'s host. What is wrong otherwise.
Result<std::vector<SlotRange>, std::string> parse_cluster_slots(const redisReply* reply,
                                                                const RedisNode& asked);

// A MOVED or ASK error reply.
struct Redirect {
    enum class Kind { moved, ask } kind = Kind::moved;
    int slot = 0;
    RedisNode node;
};

// The redirect an error reply `error` names ("MOVED 3999 127.0.0.1:6381",
// "ASK 3999 :6381": an empty host is `asked`'s); nullopt for any other text.
std::optional<Redirect> parse_redirect(std::string_view error, const RedisNode& asked);

// The slot map of one cluster, shared by a process's threads.
class SlotMap {
  public:
    explicit SlotMap(std::vector<RedisNode> seeds) : seeds_(std::move(seeds)) {}

    // The node serving `slot`; nullopt when the map must be (re)loaded first.
    std::optional<RedisNode> node_for(int slot);
    // The node that served `slot` when the map was last known, stale or
    // not; nullopt before the first load.
    std::optional<RedisNode> last_known(int slot);
    // The masters of a current map; empty when it must be (re)loaded first.
    std::vector<RedisNode> masters();
    // Replaces the map with `ranges` (a CLUSTER SLOTS answer).
    void load(const std::vector<SlotRange>& ranges);
    // `slot` moved to `node` (MOVED): served there from now on, and the
    // whole map is reloaded before the next request.
    void moved(int slot, const RedisNode& node);
    // `node` failed: the map is reloaded before the next request, asking
    // other nodes first.
    void failed(const RedisNode& node);
    // The nodes to ask for the map, best first: the map's and the seeds,
    // nodes that failed since the last load last.
    std::vector<RedisNode> candidates();

  private:
    std::mutex mu_;
    std::vector<RedisNode> seeds_;
    std::vector<RedisNode> nodes_;                     // masters, by index
    std::array<std::int16_t, kClusterSlots> slots_{};  // index into nodes_ + 1; 0: unknown
    std::vector<RedisNode> failed_;
    bool stale_ = true;
};

}  // namespace kcache::remote
