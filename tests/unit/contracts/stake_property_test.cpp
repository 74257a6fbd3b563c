// Conservation of DPS with provider stake, over random sequences (seeded; each failure names its
// seed) of registrations, attestations, challenges (upheld and refused), unbond requests, the
// releases that follow, task creations and transfers: Σ balances + bonds + task escrow and
// deposits + reward pool + DPS burned by slashes equals the genesis total after every block, the
// bonds sum to the recorded total, and the burned total is exactly the sum of the slashes' burned
// shares. Slashes move value, never create it. A negative control drops the challenger's share
// of every slash and must make the check fail.

#include <map>
#include <random>
#include <set>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <gridledger/contracts/stake.h>
#include <gridledger/contracts/tasks.h>

#include "chain_harness.h"

namespace gridledger::contracts {
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

constexpr std::uint64_t G = kGenesisMs;

struct Actors {
    std::vector<crypto::SecretKey> providers{testKey(20), testKey(21), testKey(22)};
    /** Keys that register during a run (some cannot cover the bond). */
    std::vector<crypto::SecretKey> newcomers{testKey(23), testKey(24)};
    crypto::SecretKey verifier = testKey(30);
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
    g.tasks.claimTimeoutMs = 3'000;
    g.tasks.assignTimeoutMs = 20'000;
    g.tasks.creationDeposit = 1'000'003;
    g.tasks.depositForfeitBps = 3'333;
    for (const auto& p : actors.providers) {
        g.providers.push_back(GenesisProvider{addressOf(p), petaflopInventory(50)});
        g.accounts.push_back(GenesisAccount{addressOf(p), 2 * kDps});
    }
    g.accounts.push_back(GenesisAccount{addressOf(actors.newcomers[0]), 3 * kDps});
    g.verifiers.push_back(addressOf(actors.verifier));
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
        : actors_(actors), domain_(std::move(domain)), rng_(seed) {}

    std::uint64_t nextTime(std::uint64_t now) {
        if (pick(12) == 0) {
            return now + kEpochMs * (1 + pick(3)) + pick(kSlotMs);
        }
        return now + 200 + pick(kSlotMs);
    }

    std::vector<Bytes> txs(std::uint64_t now, std::uint64_t height) {
        std::vector<Bytes> out;
        // The providers mostly attest the current slot, so that there is much to challenge.
        const std::uint64_t epoch = (now - G) / kEpochMs;
        const std::uint64_t slot = ((now - G) % kEpochMs) / kSlotMs;
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

    std::pair<const crypto::SecretKey*, codec::Payload> op(std::uint64_t now) {
        const std::uint64_t epoch = (now - G) / kEpochMs;
        const std::uint64_t slot = ((now - G) % kEpochMs) / kSlotMs;
        const std::uint64_t kind = pick(48);
        if (kind < 12) {  // an attestation of the current or an earlier slot
            const std::uint64_t s = pick(3) == 0 ? pick(slot + 1) : slot;
            return {&anyProvider(), testing::petaflops(epoch, s, 1 + pick(50))};
        }
        if (kind < 30) {  // a challenge: mostly by the verifier (upheld or already challenged)
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
                return {&who, codec::TaskCreate{"flat", 1'000'000 * (1 + pick(20)), {}, 1, {}}};
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
    std::map<Address, std::uint64_t> nonces_;
};

struct Coverage {
    std::uint64_t slashes = 0;
    std::uint64_t refusedChallenges = 0;
    std::uint64_t unbonds = 0;
    std::uint64_t releases = 0;
    std::uint64_t registrations = 0;
    std::uint64_t bondRefusals = 0;
    /** Σ burned shares of the slash events seen. */
    u128 burnedBySlashes = 0;
};

void tally(const ExecutedBlock& done, Coverage& coverage) {
    for (const auto& r : done.receipts) {
        for (const auto& e : r.events) {
            if (e.kind == "provider_slashed") {
                coverage.slashes += 1;
                coverage.burnedBySlashes += *parseU128(attr(e, "burned"));
                EXPECT_TRUE(*parseU128(attr(e, "slashed")) ==
                            *parseU128(attr(e, "burned")) + *parseU128(attr(e, "to_challenger")) +
                                *parseU128(attr(e, "to_pool")));
            }
            coverage.unbonds += e.kind == "unbond_requested" ? 1U : 0U;
            coverage.registrations += e.kind == "bond_locked" ? 1U : 0U;
        }
        coverage.refusedChallenges += r.code == ErrorCode::kAlreadyChallenged ? 1U : 0U;
        coverage.bondRefusals +=
            r.code == ErrorCode::kBondTooLow || r.code == ErrorCode::kProviderUnbonding ? 1U : 0U;
    }
    if (done.systemReceipt) {
        for (const auto& e : done.systemReceipt->events) {
            coverage.releases += e.kind == "bond_released" ? 1U : 0U;
        }
    }
}

/** Σ balances + bonds + escrow + deposits + pool + burned == totalDps; Σ bonds == bonded. */
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

/**
 * Takes back the challenger's share of every slash in `done` (the state a node would reach with
 * that one transfer of the slash disabled).
 */
void dropChallengerShares(StateLayer& state, const ExecutedBlock& done) {
    for (const auto& r : done.receipts) {
        for (const auto& e : r.events) {
            if (e.kind != "provider_slashed") {
                continue;
            }
            const Address challenger = *Address::fromHex(attr(e, "challenger"));
            auto account = *loadAccount(state, challenger);
            account.balance -= *parseU128(attr(e, "to_challenger"));
            storeAccount(state, challenger, account);
        }
    }
}

/** Runs `sequences` seeded sequences of `blocks` blocks; `broken` drops the challenger shares. */
Coverage runSequences(std::uint64_t sequences, std::uint64_t blocks, bool broken) {
    const Actors actors;
    const Genesis genesis = stakeGenesis(actors);
    const u128 totalDps = totalOf(genesis);
    Chain chain(genesis);
    const auto alwaysVerified = [](const Hash256&) { return true; };
    Coverage coverage;
    for (std::uint64_t seed = 1; seed <= sequences; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        OpGenerator ops(actors, chain.domain(), seed);
        StateLayer state(chain.tree(), 0);
        std::uint64_t now = G + 100;
        u128 burnedBySlashes = 0;
        for (std::uint64_t h = 1; h <= blocks; ++h) {
            now = ops.nextTime(now);
            codec::BlockHeader header;
            header.height = h;
            header.timestampMs = now;
            auto done = chain.executor().execute(state, codec::makeBlock(header, ops.txs(now, h)),
                                                 alwaysVerified);
            EXPECT_TRUE(done) << done.error().message;
            if (!done) {
                return coverage;
            }
            const u128 before = coverage.burnedBySlashes;
            tally(*done, coverage);
            burnedBySlashes += coverage.burnedBySlashes - before;
            if (broken) {
                dropChallengerShares(state, *done);
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
    const Coverage coverage = runSequences(kSequences, 24, false);
    std::cout << "sequences=" << kSequences << " slashes=" << coverage.slashes
              << " refused_challenges=" << coverage.refusedChallenges
              << " unbonds=" << coverage.unbonds << " releases=" << coverage.releases
              << " registrations=" << coverage.registrations
              << " bond_refusals=" << coverage.bondRefusals << "\n";
    // The runs did exercise every rule the sums are about.
    EXPECT_GT(coverage.slashes, 500U);
    EXPECT_GT(coverage.refusedChallenges, 100U);
    EXPECT_GT(coverage.unbonds, 100U);
    EXPECT_GT(coverage.releases, 50U);
    EXPECT_GT(coverage.registrations, 100U);
    EXPECT_GT(coverage.bondRefusals, 1'000U);
}

TEST(StakeConservationProperty, WithTheChallengerShareOfEachSlashDroppedTheCheckFails) {
    EXPECT_NONFATAL_FAILURE(runSequences(20, 24, true), "total DPS");
}

TEST(StakeReplayDeterminism, CommittedStakeBlocksReplayedIntoAFreshDatabaseGiveTheSameRoots) {
    const Actors actors;
    const Genesis genesis = stakeGenesis(actors);
    Chain first(genesis);
    OpGenerator ops(actors, first.domain(), 20261126);
    std::uint64_t now = G + 100;
    std::vector<ledger::ExecRoots> roots;
    Coverage coverage;
    for (int i = 0; i < 200; ++i) {
        now = ops.nextTime(now);
        auto done = first.block(now, ops.txs(now, first.height() + 1));
        tally(done, coverage);
        roots.push_back(done.roots);
    }
    EXPECT_GT(coverage.slashes, 0U);
    EXPECT_GT(coverage.releases, 0U);
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
}  // namespace gridledger::contracts
