#pragma once
// The lookup ladder (docs/design.md, "The lookup ladder"): an ordered list
// of steps, each an object behind one small interface: the rungs that may
// answer, and the stages between them that make the plan and gate it
// (rungs.hpp). A request walks it from the top (ladder.cpp); the first step
// that answers ends the walk, and every one that does not leaves its
// reason, if it has one, in the outcome.

#include <memory>
#include <string_view>

#include "ask.hpp"
#include "cl_util.hpp"
#include "contexts/program_cache.hpp"
#include "contexts/resident_bytes.hpp"
#include "counters.hpp"
#include "flight.hpp"
#include "identities.hpp"
#include "kcache/common/workers.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/service/loader.hpp"
#include "plan_memo.hpp"
#include "publish.hpp"
#include "stored_tiers.hpp"

namespace kcache::service {

// What one rung did with a request.
struct Step {
    // Not answered: the walk goes on (the rung's miss, if it has one to
    // tell, is in the outcome).
    static Step miss() { return {}; }
    // Answered without a program: the outcome says why (a failure record, a
    // compile not started or not finished, a required remote that failed).
    static Step answered() {
        Step s;
        s.done = true;
        return s;
    }
    // Answered with a program the runtime built from bytes; the in-process
    // rung keeps it for the context.
    static Step loaded(ProgramRef program) {
        Step s;
        s.done = true;
        s.program = std::move(program);
        return s;
    }
    // Answered with the in-process rung's own program (`program`: the
    // caller's new reference).
    static Step found(cl_program program) {
        Step s;
        s.done = true;
        s.kept = program;
        return s;
    }

    bool done = false;
    ProgramRef program;
    cl_program kept = nullptr;
};

// What rungs are made of: the cache's parts (owned by Cache::Impl, which
// outlives the ladder). `remote` is null when none is configured.
struct RungParts {
    const Config& config;
    Loader& loader;
    ProgramCache& programs;
    ResidentBytes& resident;
    StoredTiers& stored;
    remote::Client* remote;
    Publisher& publish;
    SingleFlight& flight;
    Identities& identities;
    Counters& counters;
    DeviceData& db;  // the device data, at first need
    PlanMemo& plans;
    Workers& workers;  // the canary's background run under warn
};

// One step of the ladder, a rung or a stage (rungs.hpp lists them). The walk
// calls each through its own final class, so no call goes through the table
// of virtual functions: a request in a new context finds all of this cold.
class LadderRung {
  public:
    // `name`: a literal, the step's name in logs, metrics and traces, and
    // `category` its trace span's ("rung", "plan", "gate"); `parts`: the
    // ladder's, which outlive the step.
    LadderRung(std::string_view name, const RungParts& parts, std::string_view category = "rung")
        : parts_(parts), name_(name), category_(category) {}
    virtual ~LadderRung() = default;
    LadderRung(const LadderRung&) = delete;
    LadderRung& operator=(const LadderRung&) = delete;

    std::string_view name() const noexcept { return name_; }
    std::string_view category() const noexcept { return category_; }
    // Whether the step looks at the request's plan (the plan stage, above
    // every step that does, made it).
    virtual bool needs_plan() const noexcept { return true; }
    // Answers `ask` (setting the outcome's rung, and its status unless it
    // loaded a program) or returns a miss, after adding its reason to
    // `ask.out.misses` when there is one to tell.
    virtual Step attempt(Ask& ask) = 0;

  protected:
    const RungParts& parts_;

  private:
    std::string_view name_;
    std::string_view category_;
};

class Ladder {
  public:
    explicit Ladder(const RungParts& parts);
    ~Ladder();
    Ladder(const Ladder&) = delete;
    Ladder& operator=(const Ladder&) = delete;
    // Walks the rungs for `ask`: returns the caller's reference to the
    // program that answered, or null with `ask.out` saying why.
    cl_program walk(Ask& ask);
    // Starts reading the rungs and their parts into the CPU's caches
    // (hot_path.hpp).
    void prefetch() const noexcept;

  private:
    struct Rungs;                   // the list, in ladder.cpp
    std::unique_ptr<Rungs> rungs_;  // the parts and every rung, in one block
};

}  // namespace kcache::service
