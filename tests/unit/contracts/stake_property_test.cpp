// Conservation of DPS with provider stake and checked results, over random sequences (seeded;
// each failure names its seed) of registrations, attestations, challenges (upheld and refused),
// unbond requests, the releases that follow, single and redundant tasks driven through their
// lives (results that agree or not, failures, verdicts on single tasks and on tied groups), spot
// checks (upheld, rejected, lapsed) and transfers: Σ balances + bonds + task escrow and deposits +
// spot-check bonds + reward pool + DPS burned by slashes equals the genesis total after every
// block, the bonds sum to the recorded total, and the burned total is exactly the sum of the
// slashes' burned shares. Slashes move value, never create it. A negative control drops the
// challenger's share of every slash and must make the check fail.

#include <map>
#include <random>
#include <set>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <gridledger/contracts/spot_checks.h>
#include <gridledger/contracts/stake.h>
#include <gridledger/contracts/task_groups.h>
#include <gridledger/contracts/tasks.h>

#include "chain_harness.h"

namespace gridledger::contracts::stake_property_test {
namespace {

using testing::addressOf;
using testing::attr;
using testing::Chain;
using testing::kDps;
using testing::kEpochMs;
using testing::kGenesisMs;
using testing::kSlotMs;
using testing::petaflopInventory;
using testing::testKey;

constexpr std::uint64_t kT0 = kGenesisMs;

struct Actors {
    std::vector<crypto::SecretKey> providers{testKey(20), testKey(21), testKey(22)};
    /** Keys that register during a run (some cannot cover the bond). */
    std::vector<crypto::SecretKey> newcomers{testKey(23), testKey(24)};
    crypto::SecretKey verifier = testKey(30);
    /** A second verifier, to decide the first one's spot checks (and open its own). */
    crypto::SecretKey verifier2 = testKey(31);
    std::vector<crypto::SecretKey> users{testKey(40), testKey(41)};
    std::vector<crypto::SecretKey> validators{testKey(1), testKey(2), testKey(3)};

    std::vector<const crypto::SecretKey*> all() const {
        std::vector<const crypto::SecretKey*> out;
        for (const auto* list : {&providers, &newcomers, &users, &validators}) {
            for (const auto& k : *list) {
                out.push_back(&k);
            }
        }
        out.push_back(&verifier);
        out.push_back(&verifier2);
        return out;
    }
};

Genesis stakeGenesis(const Actors& actors) {
    Genesis g = testing::shortEpochGenesis(3, kDps / 20);
    std::set<Address> held;
    for (const auto* key : actors.all()) {
        held.insert(addressOf(*key));
    }
    std::erase_if(g.accounts, [&](const GenesisAccount& a) { return !held.contains(a.address); });
    // An odd bond and odd shares, so that every slash rounds.
    g.stake.providerBond = kDps + 7;
    g.stake.slashBps = 1'111;
    g.stake.slashBurnBps = 3'333;
    g.stake.slashChallengerBps = 3'333;
    g.stake.slashPoolBps = 3'334;
    g.stake.unbondingDelayMs = 2 * kEpochMs;
    g.tasks.claimTimeoutMs = 10'000;
    g.tasks.assignTimeoutMs = 60'000;
    g.tasks.creationDeposit = 1'000'003;
    g.tasks.depositForfeitBps = 3'333;
    for (const auto& p : actors.providers) {
        g.providers.push_back(GenesisProvider{addressOf(p), petaflopInventory(50)});
        g.accounts.push_back(GenesisAccount{addressOf(p), 2 * kDps});
    }
    g.accounts.push_back(GenesisAccount{addressOf(actors.newcomers[0]), 3 * kDps});
    g.verifiers = {addressOf(actors.verifier), addressOf(actors.verifier2)};
    std::sort(g.verifiers.begin(), g.verifiers.end());
    g.accounts.push_back(GenesisAccount{addressOf(actors.verifier), kDps});
    g.accounts.push_back(GenesisAccount{addressOf(actors.verifier2), kDps});
    g.tasks.verifyWindowMs = 4'000;
    g.tasks.spotCheckWindowMs = 200'000;
    g.tasks.spotCheckVerdictMs = 3'000;
    g.tasks.spotCheckBond = 10'000'000'000'000'007;
    g.tasks.maxReplicas = 3;
    g.tasks.panicAfterSlots = 200;  // tasks run across the jumps of more than a minute
    for (const auto& u : actors.users) {
        g.accounts.push_back(GenesisAccount{addressOf(u), 3 * kDps});
    }
    return g;
}

u128 totalOf(const Genesis& g) {
    u128 total = g.rewardPool;
    for (const auto& a : g.accounts) {
        total += a.balance;
    }
    return total;
}

class OpGenerator {
  public:
    OpGenerator(const Actors& actors, std::string domain, std::uint64_t seed)
        : actors_(actors), domain_(std::move(domain)), rng_(seed), taskHeavy_(seed % 2 == 0) {}

    std::uint64_t nextTime(std::uint64_t now) {
        if (pick(12) == 0) {
            return now + kEpochMs * (1 + pick(3)) + pick(kSlotMs);
        }
        if (pick(8) == 0) {  // past a billed minute of the running tasks
            return now + 61'000 + pick(60'000);
        }
        return now + 200 + pick(kSlotMs);
    }

    std::vector<Bytes> txs(const StateLayer& state, std::uint64_t now, std::uint64_t height) {
        state_ = &state;
        std::vector<Bytes> out;
        // The providers mostly attest the current slot, so that there is much to challenge.
        const std::uint64_t epoch = (now - kT0) / kEpochMs;
        const std::uint64_t slot = ((now - kT0) % kEpochMs) / kSlotMs;
        for (const auto& provider : actors_.providers) {
            if (pick(5) != 0) {
                out.push_back(
                    sign(provider, testing::petaflops(epoch, slot, 1 + pick(50)), height));
            }
        }
        const std::uint64_t count = 1 + pick(6);
        for (std::uint64_t i = 0; i < count; ++i) {
            auto [key, payload] = op(now);
            out.push_back(sign(*key, std::move(payload), height));
        }
        return out;
    }

  private:
    std::uint64_t pick(std::uint64_t n) {
        return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_);
    }

    Bytes sign(const crypto::SecretKey& key, codec::Payload payload, std::uint64_t height) {
        auto& nonce = nonces_[addressOf(key)];
        codec::TxBody body{std::string(testing::kChain),
                           key.publicKey(),
                           nonce++,
                           height + 100,
                           std::move(payload),
                           1};
        return codec::signTx(body, key, domain_).raw;
    }

    const crypto::SecretKey& anyKey() {
        const auto keys = actors_.all();
        return *keys[pick(keys.size())];
    }
    const crypto::SecretKey& anyProvider() {
        return pick(5) == 0 ? actors_.newcomers[pick(2)] : actors_.providers[pick(3)];
    }

    /** A random task in `state`, if any. */
    std::optional<Task> anyTaskIn(TaskState taskState) {
        const auto ids = loadTasksByState(*state_, taskState);
        if (!ids || ids->empty()) {
            return std::nullopt;
        }
        auto task = loadTask(*state_, (*ids)[pick(ids->size())]);
        return task ? *task : std::nullopt;
    }

    /** The verifier that is not `k`'s… or either, at random. */
    const crypto::SecretKey& otherVerifier(const Address& challenger) {
        return addressOf(actors_.verifier) == challenger ? actors_.verifier2 : actors_.verifier;
    }

    /**
     * A step of a task's life by its party: a start or refusal of an assigned task, a result
     * (mostly the common one) or failure of a running one, a verdict on a submitted result (a
     * verifier's on a tied group), a spot check of a settled one or a spot-check verdict.
     */
    std::optional<std::pair<const crypto::SecretKey*, codec::Payload>> taskStep() {
        const std::uint64_t step = pick(8);
        if (step <= 1) {
            if (auto t = anyTaskIn(TaskState::kAssigned)) {
                const auto* provider = keyOf(t->provider);
                return std::pair{provider, pick(6) == 0 ? codec::Payload{codec::TaskRefuse{t->id}}
                                                        : codec::Payload{codec::TaskStart{t->id}}};
            }
        }
        if (step <= 3) {
            if (auto t = anyTaskIn(TaskState::kRunning)) {
                const auto* provider = keyOf(t->provider);
                if (pick(10) == 0) {
                    return std::pair{provider, codec::Payload{codec::TaskReportFailure{
                                                   t->id, 1, "oom", pick(180'000)}}};
                }
                const Hash256 hash{{static_cast<std::uint8_t>(pick(4) == 0 ? 0xbb : 0xaa)}};
                return std::pair{provider, codec::Payload{codec::TaskSubmitResult{
                                               t->id, hash, "", 0, pick(180'000)}}};
            }
        }
        if (step == 4) {
            if (auto t = anyTaskIn(TaskState::kResultSubmitted)) {
                if (!t->group.isZero()) {
                    const Hash256 hash{{static_cast<std::uint8_t>(pick(2) == 0 ? 0xbb : 0xaa)}};
                    return std::pair{&actors_.verifier, codec::Payload{codec::TaskVerify{
                                                            t->group, pick(4) != 0, "",
                                                            pick(4) != 0 ? hash : Hash256{}}}};
                }
                return std::pair{keyOf(t->consumer),
                                 codec::Payload{codec::TaskVerify{t->id, pick(3) != 0, "", {}}}};
            }
        }
        if (step == 5 || step == 6) {
            if (auto t = anyTaskIn(TaskState::kSettled)) {
                const auto& who = pick(2) == 0 ? actors_.verifier : actors_.verifier2;
                return std::pair{&who, codec::Payload{codec::TaskSpotCheck{t->id, "", {}}}};
            }
        }
        const auto open = loadOpenSpotChecks(*state_);
        if (open && !open->empty()) {
            const Hash256 id = (*open)[pick(open->size())];
            const auto check = loadSpotCheck(*state_, id);
            if (check && *check) {
                const auto& who = pick(8) == 0 ? *keyOf((*check)->challenger)
                                               : otherVerifier((*check)->challenger);
                return std::pair{&who,
                                 codec::Payload{codec::TaskSpotCheckVerdict{id, pick(2) == 0, ""}}};
            }
        }
        return std::nullopt;
    }

    const crypto::SecretKey* keyOf(const Address& address) {
        for (const auto* key : actors_.all()) {
            if (addressOf(*key) == address) {
                return key;
            }
        }
        return &anyKey();
    }

    std::pair<const crypto::SecretKey*, codec::Payload> op(std::uint64_t now) {
        const std::uint64_t epoch = (now - kT0) / kEpochMs;
        const std::uint64_t slot = ((now - kT0) % kEpochMs) / kSlotMs;
        const std::uint64_t kind = pick(64);
        // Odd seeds weigh stake (many challenges), even seeds the tasks' lives (few challenges,
        // so that providers keep their bonds and take tasks).
        const std::uint64_t firstStep = taskHeavy_ ? 24 : 34;
        const std::uint64_t lastChallenge = taskHeavy_ ? 12 : 22;
        if (kind >= firstStep) {
            if (auto step = taskStep()) {
                return *step;
            }
        }
        if (kind < 10) {  // an attestation of the current or an earlier slot
            const std::uint64_t s = pick(3) == 0 ? pick(slot + 1) : slot;
            return {&anyProvider(), testing::petaflops(epoch, s, 1 + pick(50))};
        }
        if (kind <
            lastChallenge) {  // a challenge: mostly by the verifier (upheld or already challenged)
            const auto& who = pick(5) == 0 ? anyKey() : actors_.verifier;
            codec::Challenge c{addressOf(anyProvider()), epoch, pick(slot + 1), "", {}};
            return {&who, c};
        }
        switch (kind % 6) {
            case 0:  // an unbond request, sometimes by someone who is no provider
                if (pick(3) == 0) {
                    return {pick(6) == 0 ? &anyKey() : &anyProvider(), codec::ProviderUnbond{}};
                }
                [[fallthrough]];
            case 1:  // a registration (the second newcomer cannot cover the bond)
                return {&actors_.newcomers[pick(2)], petaflopInventory(1 + pick(30))};
            case 2: {
                const auto& who = actors_.users[pick(2)];
                const auto replicas = static_cast<std::uint32_t>(pick(4));  // 0 and 1: single
                return {&who,
                        codec::TaskCreate{
                            "flat", 1'000'000 * (1 + pick(20)), {}, 2 + pick(3), {}, replicas}};
            }
            default: {  // a transfer, sometimes of more than the sender holds
                const auto& from = anyKey();
                const auto& to = anyKey();
                const u128 amount = u128{1 + pick(3'000)} * (kDps / 1'000);
                return {&from, codec::Transfer{addressOf(to), amount}};
            }
        }
    }

    const Actors& actors_;
    std::string domain_;
    std::mt19937_64 rng_;
    bool taskHeavy_ = false;
    const StateLayer* state_ = nullptr;
    std::map<Address, std::uint64_t> nonces_;
};

struct Coverage {
    std::uint64_t slashes = 0;
    std::uint64_t refusedChallenges = 0;
    std::uint64_t unbonds = 0;
    std::uint64_t releases = 0;
    std::uint64_t registrations = 0;
    std::uint64_t bondRefusals = 0;
    /** Groups decided by each outcome ("majority", "verdict", "lapsed", "no_result"). */
    std::map<std::string, std::uint64_t> groups;
    std::uint64_t ties = 0;
    /** Spot checks opened, and decided by each outcome ("upheld", "rejected", "lapsed"). */
    std::uint64_t spotChecks = 0;
    std::map<std::string, std::uint64_t> spotVerdicts;
    /** Slashes that refunded a consumer first. */
    std::uint64_t refunds = 0;
    /** Σ burned shares of the slash events seen. */
    u128 burnedBySlashes = 0;
};

void tallyEvent(const codec::Event& e, Coverage& coverage) {
    if (e.kind == "provider_slashed") {
        coverage.slashes += 1;
        coverage.burnedBySlashes += *parseU128(attr(e, "burned"));
        const std::string refund = attr(e, "refund");
        const u128 refunded = refund.empty() ? u128{0} : *parseU128(refund);
        coverage.refunds += refunded != 0 ? 1U : 0U;
        EXPECT_TRUE(*parseU128(attr(e, "slashed")) == refunded + *parseU128(attr(e, "burned")) +
                                                          *parseU128(attr(e, "to_challenger")) +
                                                          *parseU128(attr(e, "to_pool")));
    }
    coverage.unbonds += e.kind == "unbond_requested" ? 1U : 0U;
    coverage.registrations += e.kind == "bond_locked" ? 1U : 0U;
    coverage.releases += e.kind == "bond_released" ? 1U : 0U;
    coverage.ties += e.kind == "task_group_tied" ? 1U : 0U;
    coverage.spotChecks += e.kind == "task_spot_check_opened" ? 1U : 0U;
    if (e.kind == "task_group_resolved") {
        ++coverage.groups[attr(e, "outcome")];
    }
    if (e.kind == "task_spot_check_decided") {
        ++coverage.spotVerdicts[attr(e, "outcome")];
    }
}

void tally(const ExecutedBlock& done, Coverage& coverage) {
    for (const auto& r : done.receipts) {
        for (const auto& e : r.events) {
            tallyEvent(e, coverage);
        }
        coverage.refusedChallenges += r.code == ErrorCode::kAlreadyChallenged ? 1U : 0U;
        coverage.bondRefusals +=
            r.code == ErrorCode::kBondTooLow || r.code == ErrorCode::kProviderUnbonding ? 1U : 0U;
    }
    if (done.systemReceipt) {
        for (const auto& e : done.systemReceipt->events) {
            tallyEvent(e, coverage);
        }
    }
}

/**
 * Σ balances + bonds + escrow + deposits + open spot-check bonds + pool + burned == totalDps;
 * Σ bonds == bonded.
 */
void checkConservation(const StateLayer& state, const Actors& actors, u128 totalDps,
                       u128 burnedBySlashes, bool& held) {
    held = false;
    const auto tokenomics = loadTokenomics(state);
    const auto totals = loadStakeTotals(state);
    ASSERT_TRUE(tokenomics && totals);
    u128 dps = tokenomics->emission.rewardPool;
    const auto add = [&dps](u128 amount) {
        const auto sum = checkedAdd(dps, amount);
        ASSERT_TRUE(sum) << "DPS sum overflows";
        dps = *sum;
    };
    for (std::uint8_t s = 0; s < kTaskStateCount; ++s) {
        const auto ids = loadTasksByState(state, static_cast<TaskState>(s));
        ASSERT_TRUE(ids);
        for (const auto& id : *ids) {
            const auto task = loadTask(state, id);
            ASSERT_TRUE(task && *task);
            add((*task)->escrow + (*task)->deposit);
        }
    }
    const auto checks = loadOpenSpotChecks(state);
    ASSERT_TRUE(checks);
    for (const auto& id : *checks) {
        const auto check = loadSpotCheck(state, id);
        ASSERT_TRUE(check && *check);
        add((*check)->bond);
    }
    for (const auto* key : actors.all()) {
        const auto account = loadAccount(state, addressOf(*key));
        ASSERT_TRUE(account);
        add(account->balance);
    }
    const auto providers = loadProviderIndex(state);
    ASSERT_TRUE(providers);
    u128 bonds = 0;
    for (const auto& address : *providers) {
        const auto provider = loadProvider(state, address);
        ASSERT_TRUE(provider && *provider);
        bonds += (*provider)->bond;
    }
    EXPECT_TRUE(bonds == totals->bonded)
        << "bonds " << toDecimal(bonds) << " != bonded total " << toDecimal(totals->bonded);
    add(bonds);
    EXPECT_TRUE(totals->burned == burnedBySlashes)
        << "burned total " << toDecimal(totals->burned) << " != Σ slash burns "
        << toDecimal(burnedBySlashes);
    add(totals->burned);
    EXPECT_TRUE(dps == totalDps) << "total DPS " << toDecimal(dps) << " != " << toDecimal(totalDps);
    held = dps == totalDps && bonds == totals->bonded && totals->burned == burnedBySlashes;
}

/** One transfer of every slash disabled, for the negative controls. */
enum class Broken : std::uint8_t { kNone, kChallengerShares, kRefunds };

/**
 * Takes back the challenger's share, or the consumer's refund, of every slash in `done` (the
 * state a node would reach with that one transfer of the slash disabled).
 */
void dropSlashTransfer(StateLayer& state, const ExecutedBlock& done, Broken broken) {
    for (const auto& r : done.receipts) {
        for (const auto& e : r.events) {
            const bool refund = broken == Broken::kRefunds;
            const std::string to = attr(e, refund ? "refund_to" : "challenger");
            if (e.kind != "provider_slashed" || to.empty() || to == "system") {
                continue;
            }
            const Address payee = *Address::fromHex(to);
            auto account = *loadAccount(state, payee);
            account.balance -= *parseU128(attr(e, refund ? "refund" : "to_challenger"));
            storeAccount(state, payee, account);
        }
    }
}

/** Runs `sequences` seeded sequences of `blocks` blocks; `broken` drops one slash transfer. */
Coverage runSequences(std::uint64_t sequences, std::uint64_t blocks, Broken broken) {
    const Actors actors;
    const Genesis genesis = stakeGenesis(actors);
    const u128 totalDps = totalOf(genesis);
    Chain chain(genesis);
    const auto alwaysVerified = [](const Hash256&) { return ledger::KnownTx{true, {}}; };
    Coverage coverage;
    for (std::uint64_t seed = 1; seed <= sequences; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        OpGenerator ops(actors, chain.domain(), seed);
        StateLayer state(chain.tree(), 0);
        std::uint64_t now = kT0 + 100;
        u128 burnedBySlashes = 0;
        for (std::uint64_t h = 1; h <= blocks; ++h) {
            now = ops.nextTime(now);
            codec::BlockHeader header;
            header.height = h;
            header.timestampMs = now;
            auto done = chain.executor().execute(
                state, codec::makeBlock(header, ops.txs(state, now, h)), alwaysVerified);
            EXPECT_TRUE(done) << done.error().message;
            if (!done) {
                return coverage;
            }
            const u128 before = coverage.burnedBySlashes;
            tally(*done, coverage);
            burnedBySlashes += coverage.burnedBySlashes - before;
            if (broken != Broken::kNone) {
                dropSlashTransfer(state, *done, broken);
            }
            // Stops at the first violation (HasFailure() does not see failures that
            // EXPECT_NONFATAL_FAILURE intercepts).
            bool held = false;
            checkConservation(state, actors, totalDps, burnedBySlashes, held);
            if (!held || ::testing::Test::HasFailure()) {
                return coverage;
            }
        }
    }
    return coverage;
}

TEST(StakeConservationProperty, SlashesUnbondsAndReleasesMoveDpsAndNeverCreateIt) {
    constexpr std::uint64_t kSequences = 300;
    Coverage coverage = runSequences(kSequences, 24, Broken::kNone);
    std::cout << "sequences=" << kSequences << " slashes=" << coverage.slashes
              << " refused_challenges=" << coverage.refusedChallenges
              << " unbonds=" << coverage.unbonds << " releases=" << coverage.releases
              << " registrations=" << coverage.registrations
              << " bond_refusals=" << coverage.bondRefusals << " ties=" << coverage.ties
              << " majority=" << coverage.groups["majority"]
              << " verdict=" << coverage.groups["verdict"]
              << " lapsed=" << coverage.groups["lapsed"]
              << " no_result=" << coverage.groups["no_result"]
              << " spot_checks=" << coverage.spotChecks
              << " upheld=" << coverage.spotVerdicts["upheld"]
              << " rejected=" << coverage.spotVerdicts["rejected"]
              << " spot_lapsed=" << coverage.spotVerdicts["lapsed"]
              << " refunds=" << coverage.refunds << "\n";
    // The runs did exercise every rule the sums are about.
    EXPECT_GT(coverage.slashes, 250U);
    EXPECT_GT(coverage.refusedChallenges, 20U);
    EXPECT_GT(coverage.unbonds, 100U);
    EXPECT_GT(coverage.releases, 50U);
    EXPECT_GT(coverage.registrations, 100U);
    EXPECT_GT(coverage.bondRefusals, 1'000U);
    EXPECT_GT(coverage.ties, 50U);
    EXPECT_GT(coverage.groups["majority"], 10U);
    EXPECT_GT(coverage.groups["verdict"], 10U);
    EXPECT_GT(coverage.groups["lapsed"], 30U);
    EXPECT_GT(coverage.spotChecks, 100U);
    EXPECT_GT(coverage.spotVerdicts["upheld"], 25U);
    EXPECT_GT(coverage.spotVerdicts["rejected"], 25U);
    EXPECT_GT(coverage.spotVerdicts["lapsed"], 25U);
    EXPECT_GT(coverage.refunds, 5U);
}

TEST(StakeConservationProperty, WithTheChallengerShareOfEachSlashDroppedTheCheckFails) {
    EXPECT_NONFATAL_FAILURE(runSequences(20, 24, Broken::kChallengerShares), "total DPS");
}

TEST(StakeConservationProperty, WithTheConsumerRefundOfEachUpheldSpotCheckDroppedTheCheckFails) {
    EXPECT_NONFATAL_FAILURE(runSequences(300, 24, Broken::kRefunds), "total DPS");
}

TEST(StakeReplayDeterminism, CommittedStakeBlocksReplayedIntoAFreshDatabaseGiveTheSameRoots) {
    const Actors actors;
    const Genesis genesis = stakeGenesis(actors);
    Chain first(genesis);
    OpGenerator ops(actors, first.domain(), 20261126);
    std::uint64_t now = kT0 + 100;
    std::vector<ledger::ExecRoots> roots;
    Coverage coverage;
    for (int i = 0; i < 200; ++i) {
        now = ops.nextTime(now);
        const StateLayer head(first.tree(), first.height());
        auto done = first.block(now, ops.txs(head, now, first.height() + 1));
        tally(done, coverage);
        roots.push_back(done.roots);
    }
    EXPECT_GT(coverage.slashes, 0U);
    EXPECT_GT(coverage.releases, 0U);
    EXPECT_GT(coverage.ties, 0U);
    EXPECT_GT(coverage.spotChecks, 0U);
    Chain second(genesis);
    for (std::size_t i = 0; i < first.blocksRun().size(); ++i) {
        auto done =
            second.executor().executeAndCommit(first.blocksRun()[i], codec::QuorumCert{}, nullptr);
        ASSERT_TRUE(done) << done.error().message;
        ASSERT_EQ(done->roots, roots[i]) << "height " << i + 1;
    }
    EXPECT_EQ(*readStakeTotals(second.tree(), second.height()),
              *readStakeTotals(first.tree(), first.height()));
}

}  // namespace
}  // namespace gridledger::contracts::stake_property_test
