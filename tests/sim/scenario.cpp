#include "sim/scenario.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <set>
#include <sstream>
#include <utility>

#include <gridledger/consensus/committee.h>

namespace gridledger::sim {
namespace {

constexpr std::array<std::pair<FaultClass, std::string_view>, 15> kFaultNames{{
    {FaultClass::kNone, "none"},
    {FaultClass::kLossy, "lossy"},
    {FaultClass::kCrash, "crash"},
    {FaultClass::kPartition, "partition"},
    {FaultClass::kTwins, "twins"},
    {FaultClass::kEquivocation, "equivocation"},
    {FaultClass::kWithhold, "withhold"},
    {FaultClass::kForking, "forking"},
    {FaultClass::kMixed, "mixed"},
    {FaultClass::kExcessTwins, "excess-twins"},
    {FaultClass::kTwinsRounds, "twins-rounds"},
    {FaultClass::kTcForgery, "tc-forgery"},
    {FaultClass::kSyncLiar, "sync-liar"},
    {FaultClass::kBatchForgery, "batch-forgery"},
    {FaultClass::kBatchHoarding, "batch-hoarding"},
}};

/** Hard end of a liveness run, far beyond any bound the leader schedule sets. */
constexpr std::uint64_t kLivenessCapMs = 600'000;
/** A partition that never heals within a run. */
constexpr std::uint64_t kNever = UINT64_MAX;
/** The rounds a twins-rounds scenario gives a partition of their own. */
constexpr std::size_t kScheduledRounds = 60;
/** Faulty behaviours kMixed picks from. */
constexpr std::array<Role, 5> kFaultyRoles{Role::kTwin, Role::kEquivocator, Role::kWithholder,
                                           Role::kForker, Role::kCrashed};

consensus::Options simOptions() {
    consensus::Options options;
    options.chainId = std::string(kSimChainId);
    options.t0Ms = 1000;
    options.emptyBlockIntervalMs = 200;
    options.maxClockDriftMs = 2000;
    return options;
}

/** `count` distinct values of [0, n), in random order. */
std::vector<std::size_t> pickDistinct(std::mt19937_64& rng, std::size_t n, std::size_t count) {
    std::vector<std::size_t> all(n);
    std::iota(all.begin(), all.end(), std::size_t{0});
    for (std::size_t i = 0; i + 1 < n; ++i) {
        std::swap(all[i], all[between(rng, i, n - 1)]);
    }
    all.resize(std::min(count, n));
    return all;
}

/** Gives key `key` a second instance: both are twins. */
void addTwin(Scenario& s, std::size_t key) {
    s.roles[key] = Role::kTwin;
    s.keyOf.push_back(key);
    s.roles.push_back(Role::kTwin);
}

/** The twin instance of key `key`, or instances() if it has none. */
std::size_t twinOf(const Scenario& s, std::size_t key) {
    for (std::size_t i = s.n; i < s.instances(); ++i) {
        if (s.keyOf[i] == key) {
            return i;
        }
    }
    return s.instances();
}

/** Sides for one partition: a minority cut off, two random halves, or three groups. Twins of a
 * key are always put on different sides. */
std::vector<std::uint8_t> randomSides(const Scenario& s, std::mt19937_64& rng) {
    const std::size_t m = s.instances();
    std::vector<std::uint8_t> side(m, 0);
    const auto pattern = between(rng, 0, 2);
    if (pattern == 0) {
        const std::size_t cut =
            between(rng, 1, std::max<std::size_t>(1, consensus::maxFaultyOf(s.n)));
        for (const auto i : pickDistinct(rng, m, cut)) {
            side[i] = 1;
        }
    } else {
        for (auto& value : side) {
            value = static_cast<std::uint8_t>(between(rng, 0, pattern));
        }
    }
    for (std::size_t key = 0; key < s.n; ++key) {
        const std::size_t twin = twinOf(s, key);
        if (twin < m && side[key] == side[twin]) {
            side[twin] = static_cast<std::uint8_t>((side[key] + 1) % 2);
        }
    }
    return side;
}

/** Up to `count` partitions one after the other, all healed by GST. */
void addPartitions(Scenario& s, std::mt19937_64& rng, std::size_t count) {
    std::uint64_t cursor = between(rng, 0, 1000);
    for (std::size_t k = 0; k < count && cursor + 100 < s.gstMs; ++k) {
        const std::uint64_t heal = std::min(s.gstMs, cursor + between(rng, 500, 4000));
        s.partitions.push_back(Partition{cursor, heal, randomSides(s, rng)});
        cursor = heal + between(rng, 0, 1500);
    }
}

/** Up to `count` crashes of `instance`, each restarted before GST. */
void addCrashRestarts(Scenario& s, std::mt19937_64& rng, std::size_t instance, std::size_t count) {
    std::uint64_t cursor = 0;
    const std::uint64_t span = std::max<std::uint64_t>(1, s.gstMs / count);
    for (std::size_t k = 0; k < count; ++k) {
        const std::uint64_t at = between(rng, cursor, cursor + span);
        if (at + 10 >= s.gstMs) {
            return;
        }
        const std::uint64_t restart = std::min(s.gstMs, at + between(rng, 50, 2500));
        s.crashes.push_back(CrashPlan{instance, at, restart, chance(rng, 500)});
        cursor = restart + 1;
    }
}

void addPermanentCrash(Scenario& s, std::mt19937_64& rng, std::size_t instance) {
    s.roles[instance] = Role::kCrashed;
    s.crashes.push_back(
        CrashPlan{instance, between(rng, 0, s.gstMs), std::nullopt, chance(rng, 500)});
}

void setLoss(Scenario& s, std::mt19937_64& rng, unsigned drop, unsigned dup, unsigned stale,
             unsigned replay) {
    s.dropPermille = static_cast<unsigned>(between(rng, 0, drop));
    s.duplicatePermille = static_cast<unsigned>(between(rng, 0, dup));
    s.stalePermille = static_cast<unsigned>(between(rng, 0, stale));
    s.replayPermille = static_cast<unsigned>(between(rng, 0, replay));
}

void crashScenario(Scenario& s, std::mt19937_64& rng) {
    const std::size_t f = consensus::maxFaultyOf(s.n);
    std::set<std::size_t> down;
    for (const auto i : pickDistinct(rng, s.n, between(rng, 0, f))) {
        addPermanentCrash(s, rng, i);
        down.insert(i);
    }
    for (std::size_t i = 0; i < s.n; ++i) {
        if (!down.contains(i) && (s.n == 1 || chance(rng, 400))) {
            addCrashRestarts(s, rng, i, between(rng, 1, s.n == 1 ? 4 : 3));
        }
    }
    setLoss(s, rng, 30, 30, 0, 0);
}

/** One sync liar; honest members (up to f at a time, as in crashScenario) down for long enough
 * that they come back more than syncLagBlocks behind, and some loss. */
void syncLiarScenario(Scenario& s, std::mt19937_64& rng) {
    const std::size_t liar = between(rng, 0, s.n - 1);
    s.roles[liar] = Role::kSyncLiar;
    std::uint64_t cursor = between(rng, 0, 1000);
    while (cursor + 3000 < s.gstMs) {
        std::size_t victim = between(rng, 0, s.n - 2);
        victim += victim >= liar ? 1 : 0;
        const std::uint64_t restart = std::min(s.gstMs, cursor + between(rng, 2500, 6000));
        s.crashes.push_back(CrashPlan{victim, cursor, restart, chance(rng, 500)});
        cursor = restart + between(rng, 200, 2000);
    }
    setLoss(s, rng, 20, 20, 0, 0);
}

void mixedScenario(Scenario& s, std::mt19937_64& rng) {
    const std::size_t f = consensus::maxFaultyOf(s.n);
    const auto faulty = pickDistinct(rng, s.n, between(rng, 0, f));
    for (const auto key : faulty) {
        const Role role = kFaultyRoles[between(rng, 0, kFaultyRoles.size() - 1)];
        if (role == Role::kTwin) {
            addTwin(s, key);
        } else if (role == Role::kCrashed) {
            addPermanentCrash(s, rng, key);
        } else {
            s.roles[key] = role;
        }
    }
    for (std::size_t i = 0; i < s.n; ++i) {
        if (s.roles[i] == Role::kHonest && chance(rng, 250)) {
            addCrashRestarts(s, rng, i, between(rng, 1, 2));
        }
    }
    setLoss(s, rng, 100, 50, 20, 30);
    addPartitions(s, rng, between(rng, 0, 2));
}

/** Up to f twinned keys and, until GST, a partition per round: each run of one or two rounds is
 * whole (one in three) or split as randomSides splits, which keeps every pair of twins apart.
 * Votes reach only the next leader they are addressed to, as in the paper's protocol. */
void twinsRoundsScenario(Scenario& s, std::mt19937_64& rng) {
    const std::size_t f = consensus::maxFaultyOf(s.n);
    for (const auto key : pickDistinct(rng, s.n, between(rng, 1, std::max<std::size_t>(f, 1)))) {
        addTwin(s, key);
    }
    s.gstMs = between(rng, 5000, 15000);
    s.votesToLeaderOnly = true;
    s.roundSides.resize(kScheduledRounds);
    for (std::size_t r = 0; r < s.roundSides.size();) {
        const std::vector<std::uint8_t> sides =
            chance(rng, 333) ? std::vector<std::uint8_t>{} : randomSides(s, rng);
        for (auto k = between(rng, 1, 2); k > 0 && r < s.roundSides.size(); --k, ++r) {
            s.roundSides[r] = sides;
        }
    }
}

/** f + 1 twinned keys; twins and honest instances split evenly by a partition that never heals. */
void excessTwinsScenario(Scenario& s, std::mt19937_64& rng) {
    const std::size_t twins = consensus::maxFaultyOf(s.n) + 1;
    const auto keys = pickDistinct(rng, s.n, twins);
    for (const auto key : keys) {
        addTwin(s, key);
    }
    std::vector<std::uint8_t> side(s.instances(), 0);
    std::size_t honestSeen = 0;
    for (const auto i : pickDistinct(rng, s.n, s.n)) {
        if (s.roles[i] == Role::kHonest) {
            side[i] = static_cast<std::uint8_t>(honestSeen++ % 2);
        }
    }
    for (std::size_t i = s.n; i < s.instances(); ++i) {
        side[i] = 1;  // the original instance of each twinned key stays on side 0
    }
    s.partitions.push_back(Partition{0, kNever, side});
    s.gstMs = 0;
    s.checkLiveness = false;
    s.endMs = 20'000;
}

void applyFaults(Scenario& s, std::mt19937_64& rng) {
    const std::size_t f = consensus::maxFaultyOf(s.n);
    switch (s.faults) {
        case FaultClass::kNone:
            s.gstMs = between(rng, 0, 1000);
            break;
        case FaultClass::kLossy:
            setLoss(s, rng, 200, 100, 40, 60);
            break;
        case FaultClass::kCrash:
            crashScenario(s, rng);
            break;
        case FaultClass::kPartition:
            setLoss(s, rng, 30, 0, 0, 0);
            addPartitions(s, rng, between(rng, 1, 3));
            break;
        case FaultClass::kTwins:
            for (const auto key :
                 pickDistinct(rng, s.n, between(rng, 1, std::max<std::size_t>(f, 1)))) {
                addTwin(s, key);
            }
            setLoss(s, rng, 20, 20, 0, 0);
            addPartitions(s, rng, between(rng, 1, 3));
            break;
        case FaultClass::kEquivocation:
        case FaultClass::kWithhold:
        case FaultClass::kForking:
        case FaultClass::kTcForgery: {
            const Role role = s.faults == FaultClass::kEquivocation ? Role::kEquivocator
                              : s.faults == FaultClass::kWithhold   ? Role::kWithholder
                              : s.faults == FaultClass::kForking    ? Role::kForker
                                                                    : Role::kTcForger;
            for (const auto key :
                 pickDistinct(rng, s.n, between(rng, 1, std::max<std::size_t>(f, 1)))) {
                s.roles[key] = role;
            }
            setLoss(s, rng, 30, 30, 10, 10);
            addPartitions(s, rng, between(rng, 0, 1));
            break;
        }
        case FaultClass::kMixed:
            mixedScenario(s, rng);
            break;
        case FaultClass::kExcessTwins:
            excessTwinsScenario(s, rng);
            break;
        case FaultClass::kTwinsRounds:
            twinsRoundsScenario(s, rng);
            break;
        case FaultClass::kSyncLiar:
            syncLiarScenario(s, rng);
            break;
        case FaultClass::kBatchForgery:
        case FaultClass::kBatchHoarding: {
            s.certifiedBatches = true;
            const Role role =
                s.faults == FaultClass::kBatchForgery ? Role::kBatchForger : Role::kBatchHoarder;
            for (const auto key :
                 pickDistinct(rng, s.n, between(rng, 1, std::max<std::size_t>(f, 1)))) {
                s.roles[key] = role;
            }
            setLoss(s, rng, 20, 20, 0, 0);
            break;
        }
    }
}

void drawLinks(Scenario& s, std::mt19937_64& rng) {
    const std::size_t m = s.instances();
    const std::uint64_t jitter = s.faults == FaultClass::kLossy ? 250 : 40;
    s.links.assign(m * m, LinkDelay{});
    for (std::size_t from = 0; from < m; ++from) {
        for (std::size_t to = 0; to < m; ++to) {
            if (from != to) {
                const std::uint64_t lo = between(rng, 2, 25);
                s.links[from * m + to] = LinkDelay{lo, lo + between(rng, 0, jitter)};
                if (s.roles[from] == Role::kTcForger || s.roles[to] == Role::kTcForger) {
                    // A forger with the best place in the network: its forged TC overtakes the
                    // honest ones (a forgery that always loses that race would cost nothing).
                    s.links[from * m + to] = LinkDelay{1, 1};
                }
            }
        }
    }
}

}  // namespace

std::string_view faultName(FaultClass faults) {
    for (const auto& [value, name] : kFaultNames) {
        if (value == faults) {
            return name;
        }
    }
    return "unknown";
}

std::optional<FaultClass> parseFault(std::string_view name) {
    for (const auto& [value, known] : kFaultNames) {
        if (known == name) {
            return value;
        }
    }
    return std::nullopt;
}

std::vector<FaultClass> faultClassesFor(std::size_t n) {
    if (n == 1) {
        return {FaultClass::kNone, FaultClass::kCrash};  // no peers: crashes are the only fault
    }
    return {FaultClass::kNone,         FaultClass::kLossy,        FaultClass::kCrash,
            FaultClass::kPartition,    FaultClass::kTwins,        FaultClass::kEquivocation,
            FaultClass::kWithhold,     FaultClass::kForking,      FaultClass::kMixed,
            FaultClass::kTwinsRounds,  FaultClass::kTcForgery,    FaultClass::kSyncLiar,
            FaultClass::kBatchForgery, FaultClass::kBatchHoarding};
}

std::string_view roleName(Role role) {
    switch (role) {
        case Role::kHonest:
            return "honest";
        case Role::kTwin:
            return "twin";
        case Role::kEquivocator:
            return "equivocator";
        case Role::kWithholder:
            return "withholder";
        case Role::kForker:
            return "forker";
        case Role::kCrashed:
            return "crashed";
        case Role::kTcForger:
            return "tc-forger";
        case Role::kSyncLiar:
            return "sync-liar";
        case Role::kBatchForger:
            return "batch-forger";
        case Role::kBatchHoarder:
            return "batch-hoarder";
    }
    return "unknown";
}

bool safetyChecked(Role role) {
    return role == Role::kHonest || role == Role::kWithholder || role == Role::kCrashed ||
           role == Role::kBatchForger || role == Role::kBatchHoarder;
}

std::size_t Scenario::faultyKeys() const {
    std::set<std::size_t> keys;
    for (std::size_t i = 0; i < instances(); ++i) {
        if (roles[i] != Role::kHonest) {
            keys.insert(keyOf[i]);
        }
    }
    return keys.size();
}

Scenario makeScenario(std::size_t n, FaultClass faults, std::uint64_t seed, RulesVariant rules,
                      std::size_t reputationWindow) {
    std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                           static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(faults),
                           static_cast<std::uint32_t>(rules)};
    std::mt19937_64 rng(sequence);
    Scenario s;
    s.seed = seed;
    s.n = n;
    s.faults = faults;
    s.rules = rules;
    s.options = simOptions();
    s.options.leaderReputationWindow = reputationWindow;
    for (std::size_t i = 0; i < n; ++i) {
        s.keyOf.push_back(i);
        s.roles.push_back(Role::kHonest);
    }
    s.gstMs = between(rng, 2000, 10000);
    s.txIntervalMs = between(rng, 100, 600);
    applyFaults(s, rng);
    drawLinks(s, rng);
    if (faults != FaultClass::kExcessTwins) {
        // Liveness is claimed while the vote rules are the real ones (a weakened TC check or
        // sync start leaves them so, and must show as a liveness failure).
        s.checkLiveness =
            s.faultyKeys() <= consensus::maxFaultyOf(n) &&
            (rules == RulesVariant::kTwoChain || rules == RulesVariant::kSkipTcHighQc ||
             rules == RulesVariant::kClaimStartsSync || rules == RulesVariant::kSyncPastEpochEnd);
        s.endMs = s.gstMs + (s.checkLiveness ? kLivenessCapMs : 15'000);
    }
    return s;
}

Scenario makeReconfigScenario(const std::vector<std::vector<std::size_t>>& sets, FaultClass faults,
                              std::uint64_t seed, RulesVariant rules) {
    std::size_t keys = 0;
    std::size_t smallest = SIZE_MAX;
    for (const auto& set : sets) {
        for (const auto key : set) {
            keys = std::max(keys, key + 1);
        }
        smallest = std::min(smallest, set.size());
    }
    Scenario s = makeScenario(keys, faults, seed, rules);
    s.n = sets.front().size();
    s.validatorSets = sets;
    // Permanent crashes beyond f of the smallest committee restart instead.
    std::size_t permanent = 0;
    for (auto& crash : s.crashes) {
        if (!crash.restartMs && ++permanent > consensus::maxFaultyOf(smallest)) {
            crash.restartMs = crash.atMs + 1500;
            s.roles[crash.instance] = Role::kHonest;
        }
    }
    s.checkLiveness = true;
    s.endMs = s.gstMs + kLivenessCapMs;
    return s;
}

std::size_t Scenario::keyCount() const {
    std::size_t keys = n;
    for (const auto& set : validatorSets) {
        for (const auto key : set) {
            keys = std::max(keys, key + 1);
        }
    }
    return keys;
}

Scenario makeSteadyScenario(std::size_t n, std::uint64_t delayMs, std::uint64_t endMs) {
    Scenario s;
    s.n = n;
    s.options = simOptions();
    for (std::size_t i = 0; i < n; ++i) {
        s.keyOf.push_back(i);
        s.roles.push_back(Role::kHonest);
    }
    s.links.assign(n * n, LinkDelay{delayMs, delayMs});
    s.endlessMempool = true;
    s.txIntervalMs = endMs;  // no random arrivals: the mempools are endless
    s.checkLiveness = false;
    s.endMs = endMs;
    return s;
}

std::string Scenario::describe() const {
    std::ostringstream out;
    out << "scenario seed=" << seed << " n=" << n << " faults=" << faultName(faults)
        << " rules=" << rulesName(rules) << " t0_ms=" << options.t0Ms
        << " empty_block_ms=" << options.emptyBlockIntervalMs << "\n  instances:";
    for (std::size_t i = 0; i < instances(); ++i) {
        out << " i" << i << "=key" << keyOf[i] << "/" << roleName(roles[i]);
    }
    out << "\n  loss_permille drop=" << dropPermille << " dup=" << duplicatePermille
        << " stale=" << stalePermille << " replay=" << replayPermille << " gst_ms=" << gstMs
        << " tx_interval_ms=" << txIntervalMs << " end_ms=" << endMs
        << " liveness=" << (checkLiveness ? "checked" : "not checked")
        << " live_commits=" << liveCommits << " slack_rounds=" << livenessSlackRounds << "\n";
    if (!validatorSets.empty()) {
        out << "  validator sets (a change every " << reconfigInterval << " heights):";
        for (const auto& set : validatorSets) {
            out << " {";
            for (std::size_t k = 0; k < set.size(); ++k) {
                out << (k > 0 ? "," : "") << set[k];
            }
            out << "}";
        }
        out << "\n";
    }
    for (const auto& p : partitions) {
        out << "  partition " << p.startMs << ".."
            << (p.healMs == kNever ? std::string("never") : std::to_string(p.healMs)) << " sides:";
        for (const auto side : p.side) {
            out << ' ' << static_cast<unsigned>(side);
        }
        out << "\n";
    }
    for (std::size_t r = 0; r < roundSides.size(); ++r) {
        if (!roundSides[r].empty()) {
            out << "  round " << r + 1 << " sides:";
            for (const auto side : roundSides[r]) {
                out << ' ' << static_cast<unsigned>(side);
            }
            out << "\n";
        }
    }
    for (const auto& c : crashes) {
        out << "  crash i" << c.instance << " at=" << c.atMs
            << (c.midStep ? " mid-step" : " between-steps")
            << " restart=" << (c.restartMs ? std::to_string(*c.restartMs) : std::string("never"))
            << "\n";
    }
    return out.str();
}

std::string Scenario::replayLine() const {
    std::ostringstream out;
    out << "gridledger_sim --n " << n << " --faults " << faultName(faults) << " --rules "
        << rulesName(rules);
    if (options.leaderReputationWindow != 0) {
        out << " --reputation " << options.leaderReputationWindow;
    }
    out << " --start " << seed << " --seeds 1 --trace 200";
    return out.str();
}

}  // namespace gridledger::sim
