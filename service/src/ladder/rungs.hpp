#pragma once
// The steps of the ladder, in the order ladder.cpp lists them: the rungs
// that may answer and the stages that plan and gate the request; each is
// defined in the file named.

#include <chrono>
#include <filesystem>
#include <span>
#include <string>

#include "ladder.hpp"

namespace kcache::service {

// How long past a request's deadline a rung waits for the helper's answer
// before it calls the build lost (the watchdog has killed the helper by then).
inline constexpr auto kWatchdogGrace = std::chrono::milliseconds(250);

// Whether a rung's bytes are checked in kcache-verify before this process
// loads them: bytes built elsewhere are (docs/design.md, "Binaries built
// elsewhere"); `kept`: where the node keeps its verdicts (empty: none kept).
struct Vouch {
    bool first = false;
    std::filesystem::path kept;
};

// The one way a rung loads bytes for the planned request: vouched for first
// when `vouch.first`, then loaded on the request's context and observed (the
// load's histogram and span). The error says what refused them.
Result<ProgramRef, std::string> load_checked(const RungParts& parts, Ask& ask,
                                             std::span<const std::uint8_t> bytes,
                                             const Vouch& vouch = {});

// A program kept for (context, device) by the request's signature: a repeat
// hit, for which nothing is planned (rungs_memory.cpp).
class InProcessRung final : public LadderRung {
  public:
    explicit InProcessRung(const RungParts& parts) : LadderRung("in_process", parts) {}
    bool needs_plan() const noexcept override { return false; }
    Step attempt(Ask& ask) override;
};

// The plan (plan_stage.cpp): the one kept for this device and request (a new
// context's: its handle is still checked), else resolved: the context
// checked, the device's facts and quirks, the variant rendered or the
// source taken, the key; then the request's deadline and mode. Answers only
// when no plan can be made, with why.
class PlanStage final : public LadderRung {
  public:
    explicit PlanStage(const RungParts& parts) : LadderRung("plan", parts, "plan") {}
    bool needs_plan() const noexcept override { return false; }
    Step attempt(Ask& ask) override;
};

// The driver canary's verdict on a fresh plan's registry variant
// (canary_gate.cpp): answers driver_suspect under enforce when the verdict is
// suspect; under warn says so once and goes on.
class CanaryGate final : public LadderRung {
  public:
    explicit CanaryGate(const RungParts& parts) : LadderRung("canary gate", parts, "gate") {}
    Step attempt(Ask& ask) override;
};

// An erratum covering a fresh plan's registry variant on the driver
// (errata_gate.cpp): as a suspect verdict of the canary.
class ErrataGate final : public LadderRung {
  public:
    explicit ErrataGate(const RungParts& parts) : LadderRung("errata gate", parts, "gate") {}
    Step attempt(Ask& ask) override;
};

// A program kept for the context by the plan's key, for another request
// naming the same binary, asked only when the context has programs here
// (rungs_memory.cpp).
class KeptByKeyRung final : public LadderRung {
  public:
    explicit KeptByKeyRung(const RungParts& parts) : LadderRung("in_process by key", parts) {}
    Step attempt(Ask& ask) override;
};

// Bytes this process already loaded, for a new context (rungs_memory.cpp).
class ResidentRung final : public LadderRung {
  public:
    explicit ResidentRung(const RungParts& parts) : LadderRung("resident", parts) {}
    Step attempt(Ask& ask) override;
};

// The exact binary: the user store's hot copy, its SQLite entry, then
// packs (rungs_stored.cpp).
class StoredRung final : public LadderRung {
  public:
    explicit StoredRung(const RungParts& parts) : LadderRung("stored", parts) {}
    Step attempt(Ask& ask) override;
};

// The exact binary from the shared remote tier, asked only when no stored
// tier holds the entry (remote_rung.cpp).
class RemoteRung final : public LadderRung {
  public:
    explicit RemoteRung(const RungParts& parts) : LadderRung("remote", parts) {}
    Step attempt(Ask& ask) override;
};

// An AOT binary of a pack for the device's target, promoted to the exact
// key (rungs_stored.cpp).
class AotRung final : public LadderRung {
  public:
    explicit AotRung(const RungParts& parts) : LadderRung("aot", parts) {}
    Step attempt(Ask& ask) override;
};

// A SPIR-V entry of the request's input, for a device that loads IL, built
// into its native binary in the helper and stored (rung_il.cpp).
class IlRung final : public LadderRung {
  public:
    explicit IlRung(const RungParts& parts) : LadderRung("il", parts) {}
    Step attempt(Ask& ask) override;
};

// A fresh failure record: answers with its status, no compile (rungs_final.cpp).
class FailureRecordRung final : public LadderRung {
  public:
    explicit FailureRecordRung(const RungParts& parts) : LadderRung("failure_record", parts) {}
    Step attempt(Ask& ask) override;
};

// A compile under the deadline, one per key (flight.hpp); always answers
// (rungs_final.cpp).
class JitRung final : public LadderRung {
  public:
    explicit JitRung(const RungParts& parts) : LadderRung("jit", parts) {}
    Step attempt(Ask& ask) override;
};

}  // namespace kcache::service
