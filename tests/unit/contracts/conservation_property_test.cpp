// Properties over thousands of random operation sequences (seeded; each failure names its seed):
// total DPS over accounts, the reward pool and the escrow of hot tasks never changes, the GFL
// supply always equals the sum of the providers' balances, nothing goes negative or wraps, and
// every ended epoch is settled exactly once. Then: the same blocks replayed into a fresh database
// give the same roots.

#include <map>
#include <random>
#include <set>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <gridledger/contracts/tasks.h>

#include "chain_harness.h"

namespace gridledger::contracts::conservation_property_test {
namespace {

using testing::addressOf;
using testing::Chain;
using testing::kDps;
using testing::kEpochMs;
using testing::kGenesisMs;
using testing::kSlotMs;
using testing::petaflopInventory;
using testing::testKey;

constexpr std::uint64_t kT0 = kGenesisMs;
constexpr std::size_t kValidators = 3;

struct Actors {
    std::vector<crypto::SecretKey> validators{testKey(1), testKey(2), testKey(3)};
    std::vector<crypto::SecretKey> providers{testKey(20), testKey(21), testKey(22)};
    crypto::SecretKey verifier = testKey(30);
    std::vector<crypto::SecretKey> users{testKey(40), testKey(41)};
    /** A key that registers during the run and may get admitted. */
    crypto::SecretKey newcomer = testKey(23);

    /** Every key whose account can hold DPS in a run. */
    std::vector<const crypto::SecretKey*> all() const {
        std::vector<const crypto::SecretKey*> out;
        for (const auto* list : {&validators, &providers, &users}) {
            for (const auto& k : *list) {
                out.push_back(&k);
            }
        }
        out.push_back(&verifier);
        out.push_back(&newcomer);
        return out;
    }
};

/** Epochs of 10 × 1 s, halving every 3 epochs or at 150 GFL converted, a 0.05 DPS pool. */
Genesis propertyGenesis(const Actors& actors) {
    Genesis g = testing::shortEpochGenesis(kValidators, kDps / 20);
    // Only the actors keep their fee float: every other account stays out of the sums.
    std::set<Address> held;
    for (const auto* key : actors.all()) {
        held.insert(addressOf(*key));
    }
    std::erase_if(g.accounts, [&](const GenesisAccount& a) { return !held.contains(a.address); });
    g.tokenomics.halvingPeriodMs = 3 * kEpochMs;
    g.tokenomics.halvingGflThreshold = 150 * kGflUnit;
    g.governance.proposalTtlMs = 4 * kEpochMs;
    // Task timeouts short enough to fall due within a sequence of 16 blocks.
    g.tasks.claimTimeoutMs = 3'000;
    g.tasks.assignTimeoutMs = 20'000;
    g.tasks.verifyWindowMs = 5'000;
    g.tasks.panicAfterSlots = 3;
    // A deposit that expiries and early cancels forfeit in part, so the sums cover that path.
    g.tasks.creationDeposit = 1'000'003;
    g.tasks.depositForfeitBps = 3'333;
    const std::uint64_t sizes[] = {100, 50, 20};
    for (std::size_t i = 0; i < actors.providers.size(); ++i) {
        g.providers.push_back(
            GenesisProvider{addressOf(actors.providers[i]), petaflopInventory(sizes[i])});
        g.accounts.push_back(GenesisAccount{addressOf(actors.providers[i]), kDps});
    }
    g.verifiers.push_back(addressOf(actors.verifier));
    for (const auto& u : actors.users) {
        g.accounts.push_back(GenesisAccount{addressOf(u), 3 * kDps});
    }
    return g;
}

/** Random but plausible transactions: most are valid, many are not. */
class OpGenerator {
  public:
    OpGenerator(const Actors& actors, std::string domain, std::uint64_t seed)
        : actors_(actors), domain_(std::move(domain)), rng_(seed) {}

    /** The next block's time: usually within the slot grid, sometimes after idle epochs. */
    std::uint64_t nextTime(std::uint64_t now) {
        if (pick(10) == 0) {
            return now + kEpochMs * (1 + pick(4)) + pick(kSlotMs);
        }
        return now + 200 + pick(kSlotMs);
    }

    std::vector<Bytes> txs(std::uint64_t now, std::uint64_t height) {
        std::vector<Bytes> out;
        // Providers mostly attest the current slot, so that medians are often non-zero.
        const std::uint64_t epoch = (now - kT0) / kEpochMs;
        const std::uint64_t slot = ((now - kT0) % kEpochMs) / kSlotMs;
        for (const auto& provider : actors_.providers) {
            if (pick(5) != 0) {
                out.push_back(
                    sign(provider, testing::petaflops(epoch, slot, 1 + pick(110)), height));
            }
        }
        const std::uint64_t count = pick(6);
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

    template <typename T>
    const T& oneOf(const std::vector<T>& items) {
        return items[pick(items.size())];
    }

    Bytes sign(const crypto::SecretKey& key, codec::Payload payload, std::uint64_t height) {
        auto& nonce = nonces_[addressOf(key)];
        const std::uint64_t fee = 1;  // every fee in shortEpochGenesis
        codec::TxBody body{std::string(testing::kChain),
                           key.publicKey(),
                           nonce++,
                           height + 100,
                           std::move(payload),
                           fee};
        return codec::signTx(body, key, domain_).raw;
    }

    const crypto::SecretKey& anyKey() { return *oneOf(actors_.all()); }

    const crypto::SecretKey& anyProvider() {
        return pick(8) == 0 ? actors_.newcomer : oneOf(actors_.providers);
    }

    /** A task of 1 … 40 PFLOP/s for 1 … 3 minutes, mostly by a user, sometimes malformed. */
    std::pair<const crypto::SecretKey*, codec::Payload> createTask() {
        const auto& who = pick(5) == 0 ? anyKey() : oneOf(actors_.users);
        codec::TaskCreate t{"flat", 1'000'000 * (1 + pick(40)), {}, 1 + pick(3), {}};
        switch (pick(8)) {
            case 0:
                t.constraints = {"region == eu"};
                break;
            case 1:
                t.constraints = {"region != eu"};
                break;
            case 2:
                t.constraints = {"region ~ eu"};  // does not parse
                break;
            case 3:
                t.category = "quantum";
                break;
            default:
                break;
        }
        // The id the task gets if the transaction succeeds: sign() uses this nonce.
        tasks_.push_back(taskIdOf(addressOf(who), nonces_[addressOf(who)]));
        return {&who, t};
    }

    /** A step on one of the last tasks created, by a plausible or a random party. */
    std::pair<const crypto::SecretKey*, codec::Payload> stepTask() {
        if (tasks_.empty()) {
            return createTask();
        }
        const std::size_t recent = std::min<std::size_t>(tasks_.size(), 3);
        const Hash256 id = tasks_[tasks_.size() - 1 - pick(recent)];
        const auto& consumer = pick(4) == 0 ? anyKey() : oneOf(actors_.users);
        Hash256 result;
        result[0] = 1;
        switch (pick(8)) {
            case 0:
            case 1:
                return {&anyProvider(), codec::TaskStart{id}};
            case 2:
                return {&anyProvider(), codec::TaskRefuse{id}};
            case 3:
                return {&anyProvider(), codec::TaskSubmitResult{id, result, "", 0, pick(90'000)}};
            case 4:
                return {&anyProvider(), codec::TaskReportFailure{id, 1, "", pick(90'000)}};
            case 5: {
                const auto& who = pick(2) == 0 ? actors_.verifier : consumer;
                return {&who, codec::TaskVerify{id, pick(3) != 0, "", {}}};
            }
            case 6:
                return {&consumer, codec::TaskCancel{id}};
            default:
                return {&consumer, codec::TaskTopUp{id, 1 + pick(2)}};
        }
    }

    std::pair<const crypto::SecretKey*, codec::Payload> op(std::uint64_t now) {
        const std::uint64_t epoch = (now - kT0) / kEpochMs;
        const std::uint64_t slot = ((now - kT0) % kEpochMs) / kSlotMs;
        switch (pick(16)) {
            case 10:
            case 11:
                return createTask();
            case 12:
            case 13:
            case 14:
            case 15:
                return stepTask();
            case 0:
            case 1: {  // a DPS transfer, sometimes of more than the sender holds, or of zero
                const auto& from = anyKey();
                const auto& to = anyKey();
                const u128 amount = pick(10) == 0 ? 0 : u128{pick(4'000)} * (kDps / 1'000);
                return {&from, codec::Transfer{addressOf(to), amount}};
            }
            case 2:
            case 3:
            case 4:
            case 5: {  // an attestation, mostly of the current or an earlier slot
                codec::Attest a = testing::petaflops(epoch, slot, 1 + pick(110));
                if (pick(6) == 0) {
                    a.slot = pick(10);  // may be future or already attested
                } else if (slot > 0 && pick(3) == 0) {
                    a.slot = pick(slot);  // a late attestation of an earlier slot
                }
                if (pick(20) == 0) {
                    a.epoch = epoch + 1;
                }
                return {&anyProvider(), a};
            }
            case 6: {  // a challenge, by the verifier or by someone without the role
                const auto& who = pick(4) == 0 ? anyKey() : actors_.verifier;
                codec::Challenge c{addressOf(anyProvider()), epoch, pick(slot + 1), "", {}};
                return {&who, c};
            }
            case 7: {  // a proposal
                const auto& proposer = pick(6) == 0 ? anyKey() : oneOf(actors_.validators);
                const Address p = addressOf(anyProvider());
                codec::ProposalAction action;
                switch (pick(6)) {
                    case 0:
                        action = codec::SuspendProvider{p};
                        break;
                    case 1:
                        action = codec::ReinstateProvider{p};
                        break;
                    case 2:
                        action = codec::AdmitProvider{p};
                        break;
                    case 3:
                        action = codec::SetParameter{"tokenomics.reward_share_bps",
                                                     std::to_string(pick(10'001))};
                        break;
                    case 4:
                        action = codec::SetParameter{"tokenomics.reward_rate",
                                                     std::to_string(1 + pick(20'000'000'000ULL))};
                        break;
                    default:
                        action = codec::SetParameter{"tokenomics.halving_gfl_threshold",
                                                     std::to_string(1 + pick(300 * kGflUnit))};
                        break;
                }
                proposals_ += 1;
                return {&proposer, codec::Propose{action}};
            }
            case 8: {  // a vote on some proposal, mostly yes
                const auto& voter = pick(8) == 0 ? anyKey() : oneOf(actors_.validators);
                return {&voter, codec::ProposalVote{pick(proposals_ + 2), pick(4) != 0}};
            }
            default:  // the newcomer registers (once it succeeds, later ones are refused)
                return {&actors_.newcomer, petaflopInventory(1 + pick(30))};
        }
    }

    const Actors& actors_;
    std::string domain_;
    std::mt19937_64 rng_;
    std::map<Address, std::uint64_t> nonces_;
    std::uint64_t proposals_ = 0;
    /** Ids of every task a generated task_create would create, valid or not. */
    std::vector<Hash256> tasks_;
};

/** What the invariants saw, to show the runs did exercise settlements. */
struct Coverage {
    std::uint64_t settlements = 0;
    std::uint64_t halvings = 0;
    std::uint64_t shortfalls = 0;
    std::uint64_t payouts = 0;
    std::uint64_t successes = 0;
    std::uint64_t refusals = 0;
    /** Task transitions by trigger name, from transactions and from the chain's own work. */
    std::map<std::string, std::uint64_t> triggers;
};

/** Checks every invariant on `state` after a block at `now`. */
void checkInvariants(const StateLayer& state, const Actors& actors, u128 totalDps,
                     std::uint64_t now) {
    const auto tokenomics = loadTokenomics(state);
    ASSERT_TRUE(tokenomics);
    // DPS: accounts + pool + escrow and deposit of hot tasks is constant (u128 sums, checked);
    // each task is listed once, under its own state, and a task that ended holds neither.
    u128 dps = tokenomics->emission.rewardPool;
    for (std::uint8_t s = 0; s < kTaskStateCount; ++s) {
        const auto listed = static_cast<TaskState>(s);
        const auto ids = loadTasksByState(state, listed);
        ASSERT_TRUE(ids);
        for (const auto& id : *ids) {
            const auto task = loadTask(state, id);
            ASSERT_TRUE(task && *task);
            EXPECT_EQ((*task)->state, listed);
            if (!isHot(listed)) {
                EXPECT_TRUE((*task)->escrow == 0) << "an ended task holds escrow";
                EXPECT_TRUE((*task)->deposit == 0) << "an ended task holds its deposit";
            }
            const auto sum = checkedAdd(dps, (*task)->escrow + (*task)->deposit);
            ASSERT_TRUE(sum) << "DPS sum overflows";
            dps = *sum;
        }
    }
    for (const auto* key : actors.all()) {
        const auto account = loadAccount(state, addressOf(*key));
        ASSERT_TRUE(account);
        const auto sum = checkedAdd(dps, account->balance);
        ASSERT_TRUE(sum) << "DPS sum overflows";
        dps = *sum;
    }
    EXPECT_TRUE(dps == totalDps) << "total DPS " << toDecimal(dps) << " != " << toDecimal(totalDps);
    // GFL: the supply is the sum of the balances.
    std::uint64_t gfl = 0;
    std::vector<const crypto::SecretKey*> holders;
    holders.reserve(actors.providers.size() + 1);
    for (const auto& p : actors.providers) {
        holders.push_back(&p);
    }
    holders.push_back(&actors.newcomer);
    for (const auto* key : holders) {
        const auto balance = loadGfl(state, addressOf(*key));
        ASSERT_TRUE(balance);
        const auto sum = checkedAdd(gfl, *balance);
        ASSERT_TRUE(sum) << "GFL sum overflows";
        gfl = *sum;
    }
    EXPECT_EQ(gfl, tokenomics->gflSupply);
    // Every ended epoch is settled, none ahead.
    EXPECT_EQ(tokenomics->nextEpoch, (now - kT0) / kEpochMs);
}

void tallyTasks(const std::vector<codec::Event>& events, Coverage& coverage) {
    for (const auto& e : events) {
        if (e.kind == "task_transition") {
            coverage.triggers[testing::attr(e, "trigger")] += 1;
        }
    }
}

void tally(const ExecutedBlock& done, Coverage& coverage) {
    for (const auto& r : done.receipts) {
        (r.success() ? coverage.successes : coverage.refusals) += 1;
        tallyTasks(r.events, coverage);
    }
    if (!done.systemReceipt) {
        return;
    }
    tallyTasks(done.systemReceipt->events, coverage);
    for (const auto& e : done.systemReceipt->events) {
        coverage.settlements += e.kind == "epoch_settled" ? 1U : 0U;
        coverage.halvings += e.kind == "halving" ? 1U : 0U;
        coverage.payouts += e.kind == "dps_paid" ? 1U : 0U;
        coverage.shortfalls +=
            e.kind == "dps_paid" && testing::attr(e, "shortfall") != "0" ? 1U : 0U;
    }
}

u128 totalOf(const Genesis& g) {
    u128 total = g.rewardPool;
    for (const auto& a : g.accounts) {
        total += a.balance;
    }
    return total;
}

TEST(ConservationProperty, RandomSequencesConserveDpsAndGflAndSettleEachEpochOnce) {
    const Actors actors;
    const Genesis genesis = propertyGenesis(actors);
    // 0.05 (pool) + 3 × 1 + 2 × 3 = 9.05 DPS, and a fee float for each of the 10 actors.
    const u128 totalDps = totalOf(genesis);
    ASSERT_TRUE(totalDps == 905 * kDps / 100 + 10 * testing::kFeeFloat);
    Chain chain(genesis);
    const auto alwaysVerified = [](const Hash256&) { return ledger::KnownTx{true, {}}; };
    Coverage coverage;
    constexpr std::uint64_t kSequences = 2'000;
    constexpr std::uint64_t kBlocks = 16;
    for (std::uint64_t seed = 1; seed <= kSequences; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        OpGenerator ops(actors, chain.domain(), seed);
        StateLayer state(chain.tree(), 0);
        std::uint64_t now = kT0 + 100;
        for (std::uint64_t h = 1; h <= kBlocks; ++h) {
            now = ops.nextTime(now);
            codec::BlockHeader header;
            header.height = h;
            header.timestampMs = now;
            auto done = chain.executor().execute(state, codec::makeBlock(header, ops.txs(now, h)),
                                                 alwaysVerified);
            ASSERT_TRUE(done) << done.error().message;
            tally(*done, coverage);
            checkInvariants(state, actors, totalDps, now);
            if (::testing::Test::HasFailure()) {
                return;
            }
        }
    }
    std::cout << "sequences=" << kSequences << " blocks=" << kSequences * kBlocks
              << " settlements=" << coverage.settlements << " halvings=" << coverage.halvings
              << " payouts=" << coverage.payouts << " shortfalls=" << coverage.shortfalls
              << " ok_txs=" << coverage.successes << " refused_txs=" << coverage.refusals << "\n";
    for (const auto& [trigger, count] : coverage.triggers) {
        std::cout << "task " << trigger << "=" << count << "\n";
    }
    // The runs did exercise what the invariants are about.
    EXPECT_GT(coverage.settlements, kSequences);
    EXPECT_GT(coverage.halvings, 100U);
    EXPECT_GT(coverage.shortfalls, 10U);
    EXPECT_GT(coverage.successes, 10'000U);
    EXPECT_GT(coverage.refusals, 10'000U);
    // … and the task lifecycle: matching, the chain's timeouts and the parties' steps.
    EXPECT_GT(coverage.triggers["assign"], 1'000U);
    EXPECT_GT(coverage.triggers["assign_timeout"], 100U);
    EXPECT_GT(coverage.triggers["claim_timeout"], 100U);
    EXPECT_GT(coverage.triggers["panic"], 10U);
    EXPECT_GT(coverage.triggers["start"], 50U);
    EXPECT_GT(coverage.triggers["refuse"], 10U);
    EXPECT_GT(coverage.triggers["cancel"], 50U);
    EXPECT_GT(coverage.triggers["submit_result"], 0U);
}

TEST(ConservationProperty, TheInvariantCheckCatchesOneBaseUnitTooManyOfEitherToken) {
    const Actors actors;
    const Genesis genesis = propertyGenesis(actors);
    Chain chain(genesis);
    {
        StateLayer state(chain.tree(), 0);
        const Address user = addressOf(actors.users[0]);
        auto account = *loadAccount(state, user);
        account.balance += 1;
        storeAccount(state, user, account);
        EXPECT_NONFATAL_FAILURE(checkInvariants(state, actors, totalOf(genesis), kT0 + 100),
                                "total DPS");
    }
    {
        StateLayer state(chain.tree(), 0);
        auto tokenomics = *loadTokenomics(state);
        tokenomics.gflSupply += 1;
        storeTokenomics(state, tokenomics);
        EXPECT_NONFATAL_FAILURE(checkInvariants(state, actors, totalOf(genesis), kT0 + 100),
                                "gflSupply");
    }
}

TEST(ReplayDeterminism, TheSameBlocksInAFreshDatabaseGiveTheSameRootsOverNinetyEpochs) {
    const Actors actors;
    const Genesis genesis = propertyGenesis(actors);
    Chain first(genesis);
    OpGenerator ops(actors, first.domain(), 20240601);
    std::uint64_t now = kT0 + 100;
    std::vector<ledger::ExecRoots> roots;
    while ((now - kT0) / kEpochMs < 90) {
        now = ops.nextTime(now);
        auto done = first.block(now, ops.txs(now, first.height() + 1));
        roots.push_back(done.roots);
    }
    const auto tokenomics = first.tokenomics();
    EXPECT_GE(tokenomics.nextEpoch, 90U);
    EXPECT_GE(tokenomics.emission.halvings, 5U);

    Chain second(genesis);
    ASSERT_EQ(*second.tree().rootAt(0), *first.tree().rootAt(0));
    for (std::size_t i = 0; i < first.blocksRun().size(); ++i) {
        auto done =
            second.executor().executeAndCommit(first.blocksRun()[i], codec::QuorumCert{}, nullptr);
        ASSERT_TRUE(done) << done.error().message;
        ASSERT_EQ(done->roots, roots[i]) << "height " << i + 1;
    }
    EXPECT_EQ(second.tokenomics(), tokenomics);
}

}  // namespace
}  // namespace gridledger::contracts::conservation_property_test
