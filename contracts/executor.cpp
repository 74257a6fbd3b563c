#include <iterator>

#include <gridledger/base/overloaded.h>
#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/executor.h>
#include <gridledger/contracts/governance.h>
#include <gridledger/contracts/params.h>
#include <gridledger/contracts/settlement.h>
#include <gridledger/contracts/spot_checks.h>
#include <gridledger/contracts/stake.h>
#include <gridledger/contracts/task_contract.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/tx_validation.h>

#include "record.h"

namespace gridledger::contracts {
namespace {

/** Checks that do not depend on state: chain, expiry, signature. */
Status checkEnvelope(const codec::SignedTx& tx, const std::string& chainId,
                     const std::string& domain, std::uint64_t height, bool verified) {
    if (tx.body.chainId != chainId) {
        return fail(ErrorCode::kWrongChainId, "transaction is for chain '" + tx.body.chainId + "'");
    }
    if (tx.body.validUntilHeight < height) {
        return fail(ErrorCode::kExpired,
                    "transaction expired at height " + std::to_string(tx.body.validUntilHeight));
    }
    if (!verified && !codec::verifyTxSignature(tx, domain)) {
        return fail(ErrorCode::kBadSignature, "signature does not verify");
    }
    return {};
}

/** The leaves of a block's results root, encoded: its system receipt first, if any. */
std::vector<Bytes> encodeReceipts(const std::optional<codec::Receipt>& system,
                                  const std::vector<codec::Receipt>& receipts) {
    std::vector<Bytes> encoded;
    encoded.reserve(receipts.size() + 1);
    if (system) {
        encoded.push_back(codec::encodeReceipt(*system));
    }
    for (const auto& receipt : receipts) {
        encoded.push_back(codec::encodeReceipt(receipt));
    }
    return encoded;
}

/** Dispatches a payload to its system contract; `nonce` is the transaction's (task ids). */
Result<std::vector<codec::Event>> dispatch(StateLayer& layer, const BlockContext& block,
                                           const AccountSlot& senderSlot, std::uint64_t nonce,
                                           const codec::Payload& payload) {
    using Events = Result<std::vector<codec::Event>>;
    const Address& sender = senderSlot.address;
    return std::visit(
        Overloaded{
            [&](const codec::Transfer& t) -> Events {
                GL_ASSIGN_OR_RETURN(event, executeTransfer(layer, senderSlot, t));
                return std::vector<codec::Event>{std::move(event)};
            },
            [&](const codec::Propose& p) { return executePropose(layer, block, sender, p); },
            [&](const codec::ProposalVote& v) { return executeVote(layer, block, sender, v); },
            [&](const codec::RegisterProvider& r) {
                return executeRegisterProvider(layer, block, sender, r);
            },
            [&](const codec::Attest& a) { return executeAttest(layer, block, sender, a); },
            [&](const codec::Challenge& c) { return executeChallenge(layer, block, sender, c); },
            [&](const codec::TaskCreate& t) {
                return executeTaskCreate(layer, block, sender, nonce, t);
            },
            [&](const codec::TaskStart& t) { return executeTaskStart(layer, block, sender, t); },
            [&](const codec::TaskRefuse& t) { return executeTaskRefuse(layer, block, sender, t); },
            [&](const codec::TaskTopUp& t) { return executeTaskTopUp(layer, block, sender, t); },
            [&](const codec::TaskSubmitResult& t) {
                return executeTaskSubmitResult(layer, block, sender, t);
            },
            [&](const codec::TaskVerify& t) { return executeTaskVerify(layer, block, sender, t); },
            [&](const codec::TaskReportFailure& t) {
                return executeTaskReportFailure(layer, block, sender, t);
            },
            [&](const codec::TaskCancel& t) { return executeTaskCancel(layer, block, sender, t); },
            [&](const codec::ProviderUnbond& u) {
                return executeProviderUnbond(layer, block, sender, u);
            },
            [&](const codec::TaskSpotCheck& c) {
                return executeTaskSpotCheck(layer, block, sender, c);
            },
            [&](const codec::TaskSpotCheckVerdict& v) {
                return executeTaskSpotCheckVerdict(layer, block, sender, v);
            },
        },
        payload);
}

/**
 * Runs the payload after the same shape checks as admission (a block may carry what the mempool
 * would refuse). A transfer writes nothing when it fails, and runs on `state` itself; any other
 * payload runs in its own layer, merged only on success.
 */
Result<std::vector<codec::Event>> runPayload(StateLayer& state, const BlockContext& block,
                                             const AccountSlot& sender, const codec::SignedTx& tx) {
    GL_TRY(ledger::checkPayloadShape(tx.body.payload, tx.sender));
    if (std::holds_alternative<codec::Transfer>(tx.body.payload)) {
        return dispatch(state, block, sender, tx.body.nonce, tx.body.payload);
    }
    StateLayer layer(state);
    GL_ASSIGN_OR_RETURN(events, dispatch(layer, block, sender, tx.body.nonce, tx.body.payload));
    layer.mergeIntoParent();
    return events;
}

/** Writes what the system contracts start from: parameters, roles, pool, genesis providers. */
Status writeContractGenesis(StateLayer& state, const Genesis& genesis) {
    const ChainParams params = genesis.chainParams();
    GL_TRY(params.validate());
    storeParams(state, params);
    ValidatorSet set;
    for (const auto& v : genesis.validators) {
        set.validators.push_back(ValidatorEntry{v.name, v.consensusKey, v.nodeId, v.account});
    }
    std::sort(set.validators.begin(), set.validators.end(),
              [](const auto& a, const auto& b) { return a.consensusKey < b.consensusKey; });
    storeValidatorSet(state, set);
    TokenomicsState tokenomics;
    tokenomics.emission.lastHalvingMs = genesis.genesisTimeMs;
    tokenomics.emission.rewardPool = genesis.rewardPool;
    storeTokenomics(state, tokenomics);
    for (const auto& verifier : genesis.verifiers) {
        GL_TRY(setVerifier(state, verifier, true));
    }
    const BlockContext block{0, genesis.genesisTimeMs};
    for (const auto& provider : genesis.providers) {
        GL_TRY(ledger::checkPayloadShape(codec::Payload{provider.inventory}, provider.address));
        GL_TRY(addProvider(state, block, provider.address, provider.inventory,
                           ProviderStatus::kAdmitted));
    }
    return {};
}

}  // namespace

Hash256 systemReceiptHash(std::uint64_t height) {
    crypto::Sha256 h;
    h.update("gridledger/system-receipt").updateU64(height);
    return h.finish();
}

Executor::Executor(storage::KvStore& store, ledger::StateTree& tree,
                   const ledger::BlockStore& blocks, std::string chainId, std::string signingDomain)
    : store_(store),
      tree_(tree),
      blocks_(blocks),
      chainId_(std::move(chainId)),
      signingDomain_(std::move(signingDomain)),
      batch_(store.batch()) {}

Hash256 Executor::resultsRoot(const std::vector<codec::Receipt>& receipts) {
    return resultsRoot(std::nullopt, receipts);
}

Hash256 Executor::resultsRoot(const std::optional<codec::Receipt>& system,
                              const std::vector<codec::Receipt>& receipts) {
    return resultsRootOfEncoded(encodeReceipts(system, receipts));
}

Hash256 Executor::resultsRootOfEncoded(std::span<const Bytes> encodedReceipts) {
    std::vector<Hash256> leaves;
    leaves.reserve(encodedReceipts.size());
    for (const Bytes& encoded : encodedReceipts) {
        leaves.push_back(crypto::sha256(encoded));
    }
    return codec::merkleRoot(leaves);
}

Result<ExecutedBlock> Executor::commitGenesis(const Genesis& genesis) {
    GL_ASSIGN_OR_RETURN(executed, blocks_.executedHeight());
    if (executed) {
        return fail(ErrorCode::kInvalidArgument, "the database already holds a chain");
    }
    StateLayer state(tree_, 0);
    for (const auto& account : genesis.accounts) {
        GL_ASSIGN_OR_RETURN(existing, loadAccount(state, account.address));
        auto balance = checkedAdd(existing.balance, account.balance);
        if (!balance) {
            return fail(ErrorCode::kOverflow, "genesis balance overflows");
        }
        storeAccount(state, account.address, Account{0, *balance});
    }
    GL_TRY(writeContractGenesis(state, genesis));
    auto batch = store_.batch();
    const auto updates = state.updates();
    GL_ASSIGN_OR_RETURN(stateRoot, tree_.apply(0, updates, batch));
    const codec::Block block = genesisBlock(genesis, stateRoot);
    const ledger::ExecRoots roots{stateRoot, resultsRoot({})};
    GL_TRY(blocks_.stageExecuted(batch, block, genesisQc(block), {}, {}, roots));
    GL_TRY(store_.write(batch, syncedWrites_));
    tree_.committed(0);
    return ExecutedBlock{0, {}, std::nullopt, roots};
}

Result<codec::Receipt> Executor::executeTx(StateLayer& state, const BlockContext& context,
                                           std::uint32_t index, ByteView raw, const KnownTxs& known,
                                           const FeeParams& fees, std::set<Hash256>& seen,
                                           u128& feesPaid) const {
    codec::Receipt receipt;
    receipt.txHash = crypto::sha256(raw);
    receipt.height = context.height;
    receipt.index = index;
    auto failed = [&receipt](const Error& error) {
        receipt.code = error.code;
        return receipt;
    };
    const ledger::KnownTx knownTx = known ? known(receipt.txHash) : ledger::KnownTx{};
    std::optional<codec::SignedTx> decoded;
    const codec::SignedTx* tx = knownTx.decoded.get();
    if (tx == nullptr) {
        auto fromRaw = codec::decodeTx(raw);
        if (!fromRaw) {
            return failed(fromRaw.error());
        }
        tx = &decoded.emplace(std::move(*fromRaw));
    }
    // Only a second copy in this block is a duplicate: a copy of an earlier block's transaction
    // fails on its own merits (its nonce is spent, or it expired), from the state alone, so that
    // a ledger started from a state snapshot, without the earlier blocks, executes it alike.
    if (!seen.insert(tx->hash).second) {
        return failed(Error{ErrorCode::kDuplicateTx, "transaction already in this block"});
    }
    if (auto envelope =
            checkEnvelope(*tx, chainId_, signingDomain_, context.height, knownTx.verified);
        !envelope) {
        return failed(envelope.error());
    }
    const AccountSlot senderSlot(tx->sender);
    GL_ASSIGN_OR_RETURN(sender, loadAccount(state, senderSlot));
    if (tx->body.nonce != sender.nonce) {
        return failed(
            Error{tx->body.nonce < sender.nonce ? ErrorCode::kNonceTooLow : ErrorCode::kNonceGap,
                  "expected nonce " + std::to_string(sender.nonce)});
    }
    // A transaction that cannot pay its fee is void: it changes nothing, so a key that was
    // never funded never gets a state entry (every fee is at least 1).
    if (tx->body.fee < fees.of(tx->body.payload)) {
        return failed(Error{ErrorCode::kFeeTooLow, "fee below the payload kind's fee"});
    }
    if (sender.balance < tx->body.fee) {
        return failed(Error{ErrorCode::kInsufficientFee, "balance cannot pay the fee"});
    }
    // From here the fee is paid and the nonce consumed, whether the payload succeeds or not.
    sender.balance -= tx->body.fee;
    sender.nonce += 1;
    storeAccount(state, senderSlot, sender);
    feesPaid += tx->body.fee;
    receipt.fee = tx->body.fee;
    auto events = runPayload(state, context, senderSlot, *tx);
    if (!events && detail::isStorageError(events.error())) {
        return std::unexpected(events.error());
    }
    if (!events) {
        return failed(events.error());
    }
    receipt.events = std::move(*events);
    return receipt;
}

Result<ExecutedBlock> Executor::execute(StateLayer& state, const codec::Block& block,
                                        const KnownTxs& known) const {
    const BlockContext context{block.header.height, block.header.timestampMs};
    ExecutedBlock out;
    out.height = context.height;
    GL_ASSIGN_OR_RETURN(settled, settleEndedEpochs(state, context));
    GL_ASSIGN_OR_RETURN(taskWork, runTaskSystemWork(state, context));
    settled.insert(settled.end(), std::make_move_iterator(taskWork.begin()),
                   std::make_move_iterator(taskWork.end()));
    GL_ASSIGN_OR_RETURN(released, releaseDueBonds(state, context));
    settled.insert(settled.end(), std::make_move_iterator(released.begin()),
                   std::make_move_iterator(released.end()));
    if (!settled.empty()) {
        codec::Receipt system;
        system.txHash = systemReceiptHash(context.height);
        system.height = context.height;
        system.index = ledger::kSystemReceiptIndex;
        system.events = std::move(settled);
        out.systemReceipt = std::move(system);
    }
    // Fees follow the parameters the block starts with: a fee change that passes inside the
    // block applies from the next one.
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    out.receipts.reserve(block.txs.size());
    std::set<Hash256> seen;
    u128 feesPaid = 0;  // at most kMaxBlockTxs fees below 2^64 each: no overflow
    for (std::size_t i = 0; i < block.txs.size(); ++i) {
        GL_ASSIGN_OR_RETURN(receipt, executeTx(state, context, static_cast<std::uint32_t>(i),
                                               block.txs[i], known, params.fees, seen, feesPaid));
        out.receipts.push_back(std::move(receipt));
    }
    if (feesPaid != 0) {
        GL_ASSIGN_OR_RETURN(tokenomics, loadTokenomics(state));
        const auto pool = checkedAdd(tokenomics.emission.rewardPool, feesPaid);
        if (!pool) {
            return fail(ErrorCode::kInternal, "reward pool overflows");
        }
        tokenomics.emission.rewardPool = *pool;
        storeTokenomics(state, tokenomics);
    }
    return out;
}

Result<ExecutedBlock> Executor::executeAndCommit(const codec::Block& block,
                                                 const codec::QuorumCert& certifyingQc,
                                                 const KnownTxs& known) {
    GL_ASSIGN_OR_RETURN(executed, blocks_.executedHeight());
    const std::uint64_t height = block.header.height;
    if (!executed || height != *executed + 1) {
        return fail(ErrorCode::kInvalidBlock,
                    "block at height " + std::to_string(height) + " is not the next to execute");
    }
    StateLayer state(tree_, *executed);
    GL_ASSIGN_OR_RETURN(done, execute(state, block, known));
    return commit(block, certifyingQc, state, std::move(done));
}

Result<ExecutedBlock> Executor::commit(const codec::Block& block,
                                       const codec::QuorumCert& certifyingQc,
                                       const StateLayer& state, ExecutedBlock executed) {
    storage::WriteBatch& batch = batch_;
    batch.clear();
    const auto updates = state.updates();
    GL_ASSIGN_OR_RETURN(stateRoot, tree_.apply(block.header.height, updates, batch));
    // Each receipt is encoded once, for the results root and for the store.
    const std::vector<Bytes> encoded = encodeReceipts(executed.systemReceipt, executed.receipts);
    executed.roots = ledger::ExecRoots{stateRoot, resultsRootOfEncoded(encoded)};
    if (keepsBlocks_) {
        const auto txReceipts = std::span<const Bytes>(encoded).last(executed.receipts.size());
        GL_TRY(blocks_.stageExecuted(batch, block, certifyingQc, executed.receipts, txReceipts,
                                     executed.roots));
        if (executed.systemReceipt) {
            blocks_.stageSystemReceipt(batch, block.header.height, encoded.front());
        }
    } else {
        blocks_.stageRoots(batch, block.header.height, executed.roots);
    }
    if (syncedWrites_) {
        GL_TRY(store_.write(batch, true));
    } else {
        GL_TRY(store_.writeBehind(batch));
    }
    tree_.committed(block.header.height);
    return executed;
}

}  // namespace gridledger::contracts
