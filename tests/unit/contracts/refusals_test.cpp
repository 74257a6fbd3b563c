// Every refusal of the system contracts with its stable error code, table-driven. Each row runs
// one transaction in a block on top of the same committed chain (in memory, not committed) and
// checks the receipt's code and that the only write is the sender's consumed nonce.

#include <functional>

#include <gtest/gtest.h>

#include "chain_harness.h"

namespace gridledger::contracts {
namespace {

using testing::addressOf;
using testing::Chain;
using testing::kGenesisMs;
using testing::petaflopInventory;
using testing::petaflops;
using testing::shortEpochGenesis;
using testing::testKey;

constexpr std::uint64_t G = kGenesisMs;

/** The actors of the base chain. Validators are testKey(1…3). */
const crypto::SecretKey kAdmitted = testKey(20);    // admitted provider, 100 devices
const crypto::SecretKey kRegistered = testKey(21);  // registered, never admitted
const crypto::SecretKey kSuspended = testKey(22);   // admitted, then suspended
const crypto::SecretKey kVerifier = testKey(30);
const crypto::SecretKey kOutsider = testKey(40);  // no role at all
const crypto::SecretKey kValidator2 = testKey(2);

/** Proposal ids of the base chain. */
constexpr std::uint64_t kPassedProposal = 0;  // admit kAdmitted
constexpr std::uint64_t kOpenProposal = 4;    // grant kOutsider verifier; validator 1 voted yes
constexpr std::uint64_t kRejectedProposal = 5;
constexpr std::uint64_t kOpenCreatedMs = G + 11'100;  // expires 5 s later

/** Rows run at this time: epoch 1 (G+10 s … G+20 s), slot 2 (free; slots 0 and 1 attested). */
constexpr std::uint64_t kNow = G + 12'500;

class Refusals : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        auto genesis = shortEpochGenesis(3, testing::kDps);
        genesis.governance.proposalTtlMs = 5'000;
        chain_ = std::make_unique<Chain>(genesis);
        Chain& c = *chain_;
        // Epoch 0.
        c.block(G + 100,
                {c.tx(kAdmitted, petaflopInventory(100)), c.tx(kRegistered, petaflopInventory(10)),
                 c.tx(kSuspended, petaflopInventory(10))});
        c.pass(G + 200, codec::AdmitProvider{addressOf(kAdmitted)});             // proposal 0
        c.pass(G + 210, codec::AdmitProvider{addressOf(kSuspended)});            // 1
        c.pass(G + 220, codec::GrantVerifier{addressOf(kVerifier)});             // 2
        c.pass(G + 300, codec::SuspendProvider{addressOf(kSuspended)});          // 3
        EXPECT_TRUE(c.run(G + 500, kAdmitted, petaflops(0, 0, 100)).success());  // epoch 0 slot 0
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

codec::RegisterProvider inventoryWith(std::function<void(codec::RegisterProvider&)> change) {
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
    static const crypto::SecretKey fresh = testKey(99);  // registers nothing before the row
    const Address admitted = addressOf(kAdmitted);
    NodeId node;
    node[0] = 1;  // validator 1's node id in the test genesis
    return {
        // Governance (DESIGN.md §6.1).
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
         propose(codec::AddValidator{"again", v1.publicKey(), node}), ErrorCode::kInvalidProposal},
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
        // Providers (DESIGN.md §6.2).
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
        // PoCP attestations (DESIGN.md §6.2).
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
        // Challenges (DESIGN.md §6.2).
        {"challenging without the verifier role", &kOutsider,
         codec::Challenge{admitted, 1, 0, "", {}}, ErrorCode::kNotVerifier},
        {"challenging an absent attestation", &kVerifier, codec::Challenge{admitted, 1, 2, "", {}},
         ErrorCode::kAttestationNotFound},
        {"challenging twice", &kVerifier, codec::Challenge{admitted, 1, 1, "", {}},
         ErrorCode::kAlreadyChallenged},
        {"challenging an attestation of an ended epoch", &kVerifier,
         codec::Challenge{admitted, 0, 0, "", {}}, ErrorCode::kWrongEpoch},
    };
}

/** Executes `payload` from `signer` at `timestampMs` in memory on top of the base chain. */
Result<ExecutedBlock> runOnBase(Chain& c, StateLayer& state, const crypto::SecretKey& signer,
                                const codec::Payload& payload, std::uint64_t timestampMs) {
    const std::uint64_t base = c.height();
    const Account sender = *readAccount(c.tree(), base, addressOf(signer));
    codec::TxBody body{std::string(testing::kChain), signer.publicKey(), sender.nonce, 1'000'000,
                       payload};
    codec::BlockHeader header;
    header.height = base + 1;
    header.timestampMs = timestampMs;
    return c.executor().execute(state, codec::makeBlock(header, {codec::signTx(body, signer).raw}),
                                nullptr);
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

TEST_F(Refusals, EveryRefusalHasItsStableCodeAndWritesOnlyTheNonce) {
    Chain& c = *chain_;
    const std::uint64_t base = c.height();
    const auto all = rows();
    EXPECT_GE(all.size(), 40U);
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
        const auto updates = state.updates();
        ASSERT_EQ(updates.size(), 1U);
        EXPECT_EQ(updates[0].key, accountKey(addressOf(*row.signer)));
    }
}

}  // namespace
}  // namespace gridledger::contracts
