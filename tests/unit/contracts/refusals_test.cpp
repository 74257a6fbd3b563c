// Every refusal of the system contracts with its stable error code, table-driven. Each row runs
// one transaction in a block on top of the same committed chain (in memory, not committed) and
// checks the receipt's code and that the only writes are the sender's consumed nonce and paid
// fee, and the fee's arrival in the reward pool.

#include <algorithm>
#include <functional>

#include <gtest/gtest.h>

#include "chain_harness.h"

namespace gridledger::contracts::refusals_test {
namespace {

using testing::addressOf;
using testing::Chain;
using testing::kGenesisMs;
using testing::petaflopInventory;
using testing::petaflops;
using testing::shortEpochGenesis;
using testing::testKey;

constexpr std::uint64_t kT0 = kGenesisMs;

/** The actors of the base chain. Validators are testKey(1…3). */
const crypto::SecretKey kAdmitted = testKey(20);    // admitted provider, 100 devices
const crypto::SecretKey kRegistered = testKey(21);  // registered, never admitted
const crypto::SecretKey kSuspended = testKey(22);   // admitted, then suspended
const crypto::SecretKey kVerifier = testKey(30);
const crypto::SecretKey kOutsider = testKey(40);  // no role at all
const crypto::SecretKey kValidator2 = testKey(2);
const crypto::SecretKey kConsumer = testKey(41);  // funded at genesis, creates the tasks below

/** Proposal ids of the base chain. */
constexpr std::uint64_t kPassedProposal = 0;  // admit kAdmitted
constexpr std::uint64_t kOpenProposal = 4;    // grant kOutsider verifier; validator 1 voted yes
constexpr std::uint64_t kRejectedProposal = 5;
constexpr std::uint64_t kOpenCreatedMs = kT0 + 11'100;  // expires 5 s later

/**
 * Tasks of kConsumer in each state (kAdmitted is their provider), created in epoch 1 after the
 * block at kOpenCreatedMs; kAdmitted is offline at kNow (slot 1 challenged, slot 2 free), so
 * nothing is matched or timed out at kNow.
 */
struct Tasks {
    Hash256 pending;  // "region == mars": never matched
    Hash256 assigned;
    Hash256 running;
    Hash256 submitted;  // result submitted
    Hash256 failed;
    Hash256 cancelled;
};
Tasks gTasks;

Hash256 createdTask(const codec::Receipt& receipt) {
    EXPECT_TRUE(receipt.success()) << reasonOf(receipt.code);
    return receipt.events.empty() ? Hash256{}
                                  : *Hash256::fromHex(receipt.events[0].attributes.at(0).second);
}

/** Rows run at this time: epoch 1 (kT0+10 s … kT0+20 s), slot 2 (free; slots 0 and 1 attested). */
constexpr std::uint64_t kNow = kT0 + 12'500;

class Refusals : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        auto genesis = shortEpochGenesis(3, testing::kDps);
        genesis.governance.proposalTtlMs = 5'000;
        genesis.tasks.panicAfterSlots = 20;  // the running task outlives every row's time
        genesis.accounts.push_back({addressOf(kConsumer), testing::kDps});
        chain_ = std::make_unique<Chain>(genesis);
        Chain& c = *chain_;
        // Epoch 0.
        c.block(kT0 + 100,
                {c.tx(kAdmitted, petaflopInventory(100)), c.tx(kRegistered, petaflopInventory(10)),
                 c.tx(kSuspended, petaflopInventory(10))});
        c.pass(kT0 + 200, codec::AdmitProvider{addressOf(kAdmitted)});             // proposal 0
        c.pass(kT0 + 210, codec::AdmitProvider{addressOf(kSuspended)});            // 1
        c.pass(kT0 + 220, codec::GrantVerifier{addressOf(kVerifier)});             // 2
        c.pass(kT0 + 300, codec::SuspendProvider{addressOf(kSuspended)});          // 3
        EXPECT_TRUE(c.run(kT0 + 500, kAdmitted, petaflops(0, 0, 100)).success());  // epoch 0 slot 0
        // Epoch 1, slot 1: slots 0 and 1 attested; slot 1 challenged.
        auto b = c.block(
            kOpenCreatedMs,
            {c.tx(kAdmitted, petaflops(1, 0, 100)), c.tx(kAdmitted, petaflops(1, 1, 100)),
             c.tx(kVerifier, codec::Challenge{addressOf(kAdmitted), 1, 1, "", {}}),
             c.tx(testKey(1),
                  codec::Propose{codec::GrantVerifier{addressOf(kOutsider)}}),  // proposal 4
             c.tx(testKey(1), codec::ProposalVote{kOpenProposal, true}),
             c.tx(testKey(1),
                  codec::Propose{codec::GrantVerifier{addressOf(kRegistered)}}),  // proposal 5
             c.tx(testKey(2), codec::ProposalVote{kRejectedProposal, false})});
        for (const auto& r : b.receipts) {
            EXPECT_TRUE(r.success()) << reasonOf(r.code);
        }
        createTasks(c);
    }

    /** Matching runs at kT0+11.3 s (kAdmitted online by its slot 0 of epoch 1). */
    static void createTasks(Chain& c) {
        const auto create = [&](std::vector<std::string> constraints) {
            return c.tx(kConsumer,
                        codec::TaskCreate{"flat", 1'000'000, std::move(constraints), 60, {}});
        };
        auto created = c.block(kT0 + 11'200, {create({}), create({}), create({}), create({}),
                                              create({}), create({"region == mars"})});
        Tasks& t = gTasks;
        t.assigned = createdTask(created.receipts.at(0));
        t.running = createdTask(created.receipts.at(1));
        t.submitted = createdTask(created.receipts.at(2));
        t.failed = createdTask(created.receipts.at(3));
        t.cancelled = createdTask(created.receipts.at(4));
        t.pending = createdTask(created.receipts.at(5));
        Hash256 result;
        result[0] = 1;
        auto moved = c.block(kT0 + 11'300, {c.tx(kAdmitted, codec::TaskStart{t.running}),
                                            c.tx(kAdmitted, codec::TaskStart{t.submitted}),
                                            c.tx(kAdmitted, codec::TaskStart{t.failed}),
                                            c.tx(kConsumer, codec::TaskCancel{t.cancelled})});
        auto ended = c.block(
            kT0 + 11'400, {c.tx(kAdmitted, codec::TaskSubmitResult{t.submitted, result, "", 0, 1}),
                           c.tx(kAdmitted, codec::TaskReportFailure{t.failed, 1, "", 1})});
        for (const auto* b : {&moved, &ended}) {
            for (const auto& r : b->receipts) {
                EXPECT_TRUE(r.success()) << reasonOf(r.code);
            }
        }
    }

    static void TearDownTestSuite() { chain_.reset(); }

    static std::unique_ptr<Chain> chain_;
};

std::unique_ptr<Chain> Refusals::chain_;

struct Row {
    std::string name;
    const crypto::SecretKey* signer;
    codec::Payload payload;
    ErrorCode expected;
    std::uint64_t timestampMs = kNow;
};

codec::RegisterProvider inventoryWith(const std::function<void(codec::RegisterProvider&)>& change) {
    codec::RegisterProvider r = petaflopInventory(4);
    change(r);
    return r;
}

codec::Propose propose(codec::ProposalAction action) {
    return codec::Propose{std::move(action)};
}

std::vector<Row> rows() {
    const auto v1 = testKey(1);
    static const crypto::SecretKey validator1 = testKey(1);
    static const crypto::SecretKey validator2 = testKey(2);
    static const crypto::SecretKey fresh = testKey(69);  // registers nothing before the row
    const Address admitted = addressOf(kAdmitted);
    NodeId node;
    node[0] = 1;  // validator 1's node id in the test genesis
    return {
        // Governance (docs/tokenomics.md).
        {"propose by a non-validator", &kOutsider,
         propose(codec::GrantVerifier{addressOf(kOutsider)}), ErrorCode::kNotValidator},
        {"vote by a non-validator", &kOutsider, codec::ProposalVote{kOpenProposal, true},
         ErrorCode::kNotValidator},
        {"a second vote by the same validator", &validator1,
         codec::ProposalVote{kOpenProposal, false}, ErrorCode::kAlreadyVoted},
        {"a vote on an unknown proposal", &validator1, codec::ProposalVote{77, true},
         ErrorCode::kProposalNotFound},
        {"a vote on a passed proposal", &validator1, codec::ProposalVote{kPassedProposal, true},
         ErrorCode::kProposalClosed},
        {"a vote on a rejected proposal", &validator1, codec::ProposalVote{kRejectedProposal, true},
         ErrorCode::kProposalClosed},
        {"a vote at the expiry time", &validator2, codec::ProposalVote{kOpenProposal, true},
         ErrorCode::kProposalExpired, kOpenCreatedMs + 5'000},
        {"adding an existing validator", &validator1,
         propose(codec::AddValidator{"again", v1.publicKey(), node, Address{{9}}}),
         ErrorCode::kInvalidProposal},
        {"removing a key that is no validator", &validator1,
         propose(codec::RemoveValidator{kOutsider.publicKey()}), ErrorCode::kInvalidProposal},
        {"an unknown parameter", &validator1, propose(codec::SetParameter{"tokenomics.x", "1"}),
         ErrorCode::kInvalidProposal},
        {"the epoch length, fixed at genesis", &validator1,
         propose(codec::SetParameter{"tokenomics.epoch_ms", "20000"}), ErrorCode::kInvalidProposal},
        {"a reward share above 100%", &validator1,
         propose(codec::SetParameter{"tokenomics.reward_share_bps", "10001"}),
         ErrorCode::kInvalidProposal},
        {"weights that do not sum to 10000 bps", &validator1,
         propose(codec::SetParameter{"index.category.flat.weights", "memory_bandwidth=9000"}),
         ErrorCode::kInvalidProposal},
        {"an empty parameter name (shape)", &validator1, propose(codec::SetParameter{"", "1"}),
         ErrorCode::kInvalidProposal},
        {"admitting an unregistered provider", &validator1,
         propose(codec::AdmitProvider{addressOf(kOutsider)}), ErrorCode::kProviderNotFound},
        {"admitting an admitted provider", &validator1, propose(codec::AdmitProvider{admitted}),
         ErrorCode::kInvalidProposal},
        {"suspending a provider never admitted", &validator1,
         propose(codec::SuspendProvider{addressOf(kRegistered)}), ErrorCode::kInvalidProposal},
        {"reinstating a provider not suspended", &validator1,
         propose(codec::ReinstateProvider{admitted}), ErrorCode::kInvalidProposal},
        {"granting the verifier role twice", &validator1,
         propose(codec::GrantVerifier{addressOf(kVerifier)}), ErrorCode::kInvalidProposal},
        {"revoking a role never granted", &validator1,
         propose(codec::RevokeVerifier{addressOf(kOutsider)}), ErrorCode::kInvalidProposal},
        // Providers (docs/tokenomics.md).
        {"registering twice", &kAdmitted, petaflopInventory(1), ErrorCode::kProviderExists},
        {"a category the index lacks", &fresh,
         inventoryWith([](auto& r) { r.categories = {"quantum"}; }), ErrorCode::kUnknownCategory},
        {"a device of count 0 (shape)", &fresh,
         inventoryWith([](auto& r) { r.devices[0].count = 0; }), ErrorCode::kInvalidInventory},
        {"two devices with one model name (shape)", &fresh,
         inventoryWith([](auto& r) { r.devices.push_back(r.devices[0]); }),
         ErrorCode::kInvalidInventory},
        {"a named factor shadowing a standard one", &fresh, inventoryWith([](auto& r) {
             r.devices[0].factors = {{"memory_bandwidth", 9}};
         }),
         ErrorCode::kInvalidInventory},
        // PoCP attestations (docs/tokenomics.md).
        {"attesting without registration", &kOutsider, petaflops(1, 1, 1),
         ErrorCode::kProviderNotAdmitted},
        {"attesting registered but not admitted", &kRegistered, petaflops(1, 1, 1),
         ErrorCode::kProviderNotAdmitted},
        {"attesting while suspended", &kSuspended, petaflops(1, 1, 1),
         ErrorCode::kProviderSuspended},
        {"attesting for the previous epoch", &kAdmitted, petaflops(0, 5, 1),
         ErrorCode::kWrongEpoch},
        {"attesting for the next epoch", &kAdmitted, petaflops(2, 0, 1), ErrorCode::kWrongEpoch},
        {"attesting a slot that has not begun", &kAdmitted, petaflops(1, 3, 1),
         ErrorCode::kFutureSlot},
        {"attesting a slot beyond the epoch", &kAdmitted, petaflops(1, 10, 1),
         ErrorCode::kInvalidArgument},
        {"attesting a slot twice", &kAdmitted, petaflops(1, 0, 1), ErrorCode::kSlotAlreadyAttested},
        {"more devices than registered", &kAdmitted, petaflops(1, 2, 101),
         ErrorCode::kBeyondInventory},
        {"a model not in the inventory", &kAdmitted,
         codec::Attest{1, 2, "flat", {{"gpu-x", 1}}, 0, 0, {}}, ErrorCode::kBeyondInventory},
        {"a category the provider does not serve", &kAdmitted,
         codec::Attest{1, 2, "other", {{"pf1", 1}}, 0, 0, {}}, ErrorCode::kUnknownCategory},
        {"a category the index lacks", &kAdmitted,
         codec::Attest{1, 2, "quantum", {{"pf1", 1}}, 0, 0, {}}, ErrorCode::kUnknownCategory},
        {"a renewable share above 100% (shape)", &kAdmitted,
         codec::Attest{1, 2, "flat", {{"pf1", 1}}, 0, 10'001, {}}, ErrorCode::kInvalidArgument},
        {"no device at all (shape)", &kAdmitted, codec::Attest{1, 2, "flat", {}, 0, 0, {}},
         ErrorCode::kInvalidArgument},
        // Challenges (docs/tokenomics.md).
        {"challenging without the verifier role", &kOutsider,
         codec::Challenge{admitted, 1, 0, "", {}}, ErrorCode::kNotVerifier},
        {"challenging an absent attestation", &kVerifier, codec::Challenge{admitted, 1, 2, "", {}},
         ErrorCode::kAttestationNotFound},
        {"challenging twice", &kVerifier, codec::Challenge{admitted, 1, 1, "", {}},
         ErrorCode::kAlreadyChallenged},
        {"challenging an attestation of an ended epoch", &kVerifier,
         codec::Challenge{admitted, 0, 0, "", {}}, ErrorCode::kWrongEpoch},
        // Tasks (docs/tasks.md): malformed, unknown, wrong state, wrong party.
        {"a task in a category the index lacks", &kConsumer,
         codec::TaskCreate{"quantum", 1'000'000, {}, 10, {}}, ErrorCode::kUnknownCategory},
        {"a label constraint that does not parse", &kConsumer,
         codec::TaskCreate{"flat", 1'000'000, {"region ~ eu"}, 10, {}}, ErrorCode::kInvalidTask},
        {"an ordering constraint on a word", &kConsumer,
         codec::TaskCreate{"flat", 1'000'000, {"tier < gold"}, 10, {}}, ErrorCode::kInvalidTask},
        {"a task priced at 0 per minute", &kConsumer, codec::TaskCreate{"flat", 1, {}, 10, {}},
         ErrorCode::kInvalidTask},
        {"a task of 0 GFLOP/s (shape)", &kConsumer, codec::TaskCreate{"flat", 0, {}, 10, {}},
         ErrorCode::kInvalidTask},
        {"a task of 0 minutes (shape)", &kConsumer, codec::TaskCreate{"flat", 1'000'000, {}, 0, {}},
         ErrorCode::kInvalidTask},
        {"a task without a category (shape)", &kConsumer,
         codec::TaskCreate{"", 1'000'000, {}, 10, {}}, ErrorCode::kInvalidTask},
        {"an escrow above the balance", &kOutsider,
         codec::TaskCreate{"flat", 1'000'000'000, {}, 1'000'000, {}},
         ErrorCode::kInsufficientBalance},
        {"starting an unknown task", &kAdmitted, codec::TaskStart{Hash256{{9}}},
         ErrorCode::kTaskNotFound},
        {"cancelling an unknown task", &kConsumer, codec::TaskCancel{Hash256{{9}}},
         ErrorCode::kTaskNotFound},
        {"a zero task id (shape)", &kAdmitted, codec::TaskStart{Hash256{}},
         ErrorCode::kInvalidTask},
        {"starting a pending task", &kAdmitted, codec::TaskStart{gTasks.pending},
         ErrorCode::kInvalidTaskTransition},
        {"starting a running task", &kAdmitted, codec::TaskStart{gTasks.running},
         ErrorCode::kInvalidTaskTransition},
        {"starting as the consumer", &kConsumer, codec::TaskStart{gTasks.assigned},
         ErrorCode::kNotTaskParty},
        {"starting as another provider", &kSuspended, codec::TaskStart{gTasks.assigned},
         ErrorCode::kNotTaskParty},
        {"refusing a running task", &kAdmitted, codec::TaskRefuse{gTasks.running},
         ErrorCode::kInvalidTaskTransition},
        {"refusing as an outsider", &kOutsider, codec::TaskRefuse{gTasks.assigned},
         ErrorCode::kNotTaskParty},
        {"topping up a cancelled task", &kConsumer, codec::TaskTopUp{gTasks.cancelled, 5},
         ErrorCode::kInvalidTaskTransition},
        {"topping up a failed task", &kConsumer, codec::TaskTopUp{gTasks.failed, 5},
         ErrorCode::kInvalidTaskTransition},
        {"topping up as the provider", &kAdmitted, codec::TaskTopUp{gTasks.running, 5},
         ErrorCode::kNotTaskParty},
        {"a top-up of 0 minutes (shape)", &kConsumer, codec::TaskTopUp{gTasks.running, 0},
         ErrorCode::kInvalidTask},
        {"a result for an assigned task", &kAdmitted,
         codec::TaskSubmitResult{gTasks.assigned, Hash256{{1}}, "", 0, 1},
         ErrorCode::kInvalidTaskTransition},
        {"a result from the consumer", &kConsumer,
         codec::TaskSubmitResult{gTasks.running, Hash256{{1}}, "", 0, 1}, ErrorCode::kNotTaskParty},
        {"a result without a hash (shape)", &kAdmitted,
         codec::TaskSubmitResult{gTasks.running, Hash256{}, "", 0, 1}, ErrorCode::kInvalidTask},
        {"a verdict from an outsider", &kOutsider,
         codec::TaskVerify{gTasks.submitted, true, "", {}}, ErrorCode::kNotTaskParty},
        {"a verdict from the provider", &kAdmitted,
         codec::TaskVerify{gTasks.submitted, true, "", {}}, ErrorCode::kNotTaskParty},
        {"a verdict on a running task", &kConsumer,
         codec::TaskVerify{gTasks.running, false, "", {}}, ErrorCode::kInvalidTaskTransition},
        {"a verdict on a failed task", &kVerifier, codec::TaskVerify{gTasks.failed, true, "", {}},
         ErrorCode::kInvalidTaskTransition},
        {"a failure report after the result", &kAdmitted,
         codec::TaskReportFailure{gTasks.submitted, 1, "", 1}, ErrorCode::kInvalidTaskTransition},
        {"a failure report from an outsider", &kOutsider,
         codec::TaskReportFailure{gTasks.running, 1, "", 1}, ErrorCode::kNotTaskParty},
        {"cancelling after the result", &kConsumer, codec::TaskCancel{gTasks.submitted},
         ErrorCode::kInvalidTaskTransition},
        {"cancelling a cancelled task", &kConsumer, codec::TaskCancel{gTasks.cancelled},
         ErrorCode::kInvalidTaskTransition},
        {"cancelling as the provider", &kAdmitted, codec::TaskCancel{gTasks.running},
         ErrorCode::kNotTaskParty},
    };
}

/** Executes `payload` from `signer` at `timestampMs` in memory on top of the base chain. */
Result<ExecutedBlock> runOnBase(Chain& c, StateLayer& state, const crypto::SecretKey& signer,
                                const codec::Payload& payload, std::uint64_t timestampMs) {
    const std::uint64_t base = c.height();
    const Account sender = *readAccount(c.tree(), base, addressOf(signer));
    codec::TxBody body{
        std::string(testing::kChain), signer.publicKey(), sender.nonce, 1'000'000, payload,
        c.params().fees.of(payload)};
    codec::BlockHeader header;
    header.height = base + 1;
    header.timestampMs = timestampMs;
    return c.executor().execute(
        state, codec::makeBlock(header, {codec::signTx(body, signer, c.domain()).raw}), nullptr);
}

TEST_F(Refusals, TheSameActionsSucceedWhenAllowed) {
    // Controls: the base chain accepts each kind of action from the right party in the right slot.
    Chain& c = *chain_;
    const Address admitted = addressOf(kAdmitted);
    const std::vector<Row> allowed{
        {"an attestation of the current slot", &kAdmitted, petaflops(1, 2, 100), ErrorCode::kOk},
        {"a challenge of a current attestation", &kVerifier,
         codec::Challenge{admitted, 1, 0, "", {}}, ErrorCode::kOk},
        {"a second validator's vote", &kValidator2, codec::ProposalVote{kOpenProposal, true},
         ErrorCode::kOk},
        {"a proposal by a validator", &kValidator2,
         codec::Propose{codec::ReinstateProvider{addressOf(kSuspended)}}, ErrorCode::kOk},
        {"a registration", &kOutsider, petaflopInventory(1), ErrorCode::kOk},
        {"a task", &kConsumer, codec::TaskCreate{"flat", 1'000'000, {"region in eu,us"}, 10, {}},
         ErrorCode::kOk},
        {"the provider's start", &kAdmitted, codec::TaskStart{gTasks.assigned}, ErrorCode::kOk},
        {"the provider's refusal", &kAdmitted, codec::TaskRefuse{gTasks.assigned}, ErrorCode::kOk},
        {"the consumer's top-up", &kConsumer, codec::TaskTopUp{gTasks.assigned, 5}, ErrorCode::kOk},
        {"the provider's result", &kAdmitted,
         codec::TaskSubmitResult{gTasks.running, Hash256{{1}}, "", 0, 1}, ErrorCode::kOk},
        {"a verifier's verdict", &kVerifier, codec::TaskVerify{gTasks.submitted, false, "", {}},
         ErrorCode::kOk},
        {"the consumer's cancel", &kConsumer, codec::TaskCancel{gTasks.running}, ErrorCode::kOk},
        {"the provider's failure report", &kAdmitted,
         codec::TaskReportFailure{gTasks.running, 1, "", 1}, ErrorCode::kOk},
    };
    for (const auto& row : allowed) {
        SCOPED_TRACE(row.name);
        StateLayer state(c.tree(), c.height());
        auto done = runOnBase(c, state, *row.signer, row.payload, row.timestampMs);
        ASSERT_TRUE(done) << done.error().message;
        EXPECT_EQ(done->receipts.at(0).code, row.expected)
            << "got " << reasonOf(done->receipts[0].code);
    }
}

TEST_F(Refusals, EveryRefusalHasItsStableCodeAndWritesOnlyTheNonceAndTheFee) {
    Chain& c = *chain_;
    const std::uint64_t base = c.height();
    const auto all = rows();
    EXPECT_GE(all.size(), 70U);
    for (const auto& row : all) {
        SCOPED_TRACE(row.name);
        StateLayer state(c.tree(), base);
        auto done = runOnBase(c, state, *row.signer, row.payload, row.timestampMs);
        ASSERT_TRUE(done) << done.error().message;
        ASSERT_EQ(done->receipts.size(), 1U);
        EXPECT_EQ(done->receipts[0].code, row.expected)
            << "got " << reasonOf(done->receipts[0].code);
        EXPECT_TRUE(done->receipts[0].events.empty());
        EXPECT_FALSE(done->systemReceipt);
        // Two writes: the signer's account (nonce consumed, fee paid) and the reward pool.
        const auto updates = state.updates();
        ASSERT_EQ(updates.size(), 2U);
        EXPECT_TRUE(std::any_of(updates.begin(), updates.end(), [&](const auto& u) {
            return u.key == accountKey(addressOf(*row.signer));
        }));
        EXPECT_GT(done->receipts[0].fee, 0U);
        EXPECT_EQ(loadTokenomics(state)->emission.rewardPool,
                  c.tokenomics().emission.rewardPool + done->receipts[0].fee);
    }
}

}  // namespace
}  // namespace gridledger::contracts::refusals_test
