#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/executor.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::contracts {
namespace {

/** Checks that do not depend on state: chain, expiry, signature. */
Status checkEnvelope(const codec::SignedTx& tx, const std::string& chainId, std::uint64_t height,
                     const VerifiedCache& verified) {
    if (tx.body.chainId != chainId) {
        return fail(ErrorCode::kWrongChainId, "transaction is for chain '" + tx.body.chainId + "'");
    }
    if (tx.body.validUntilHeight < height) {
        return fail(ErrorCode::kExpired,
                    "transaction expired at height " + std::to_string(tx.body.validUntilHeight));
    }
    if (!(verified && verified(tx.hash)) && !codec::verifyTxSignature(tx)) {
        return fail(ErrorCode::kBadSignature, "signature does not verify");
    }
    return {};
}

/** Runs the payload in its own layer; the layer is merged only on success. */
Result<std::vector<codec::Event>> runPayload(StateLayer& state, const codec::SignedTx& tx) {
    StateLayer layer(state);
    std::vector<codec::Event> events;
    auto result = std::visit(
        [&](const codec::Transfer& transfer) -> Status {
            GL_ASSIGN_OR_RETURN(event, executeTransfer(layer, tx.sender, transfer));
            events.push_back(std::move(event));
            return {};
        },
        tx.body.payload);
    if (!result) {
        return std::unexpected(result.error());
    }
    layer.mergeIntoParent();
    return events;
}

}  // namespace

Executor::Executor(storage::KvStore& store, ledger::StateTree& tree,
                   const ledger::BlockStore& blocks, std::string chainId)
    : store_(store), tree_(tree), blocks_(blocks), chainId_(std::move(chainId)) {}

Hash256 Executor::resultsRoot(const std::vector<codec::Receipt>& receipts) {
    std::vector<Hash256> leaves;
    leaves.reserve(receipts.size());
    for (const auto& receipt : receipts) {
        leaves.push_back(crypto::sha256(codec::encodeReceipt(receipt)));
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
    auto batch = store_.batch();
    const auto updates = state.updates();
    GL_ASSIGN_OR_RETURN(stateRoot, tree_.apply(0, updates, batch));
    const codec::Block block = genesisBlock(genesis, stateRoot);
    const ledger::ExecRoots roots{stateRoot, resultsRoot({})};
    blocks_.stageExecuted(batch, block, genesisQc(block), {}, roots);
    GL_TRY(store_.write(batch, true));
    return ExecutedBlock{0, {}, roots};
}

Result<codec::Receipt> Executor::executeTx(StateLayer& state, std::uint64_t height,
                                           std::uint32_t index, ByteView raw,
                                           const VerifiedCache& verified,
                                           std::set<Hash256>& seen) const {
    codec::Receipt receipt;
    receipt.txHash = crypto::sha256(raw);
    receipt.height = height;
    receipt.index = index;
    auto failed = [&receipt](const Error& error) {
        receipt.code = error.code;
        return receipt;
    };

    auto tx = codec::decodeTx(raw);
    if (!tx) {
        return failed(tx.error());
    }
    GL_ASSIGN_OR_RETURN(location, blocks_.locateTx(tx->hash));
    if (location || !seen.insert(tx->hash).second) {
        return failed(Error{ErrorCode::kDuplicateTx, "transaction already executed"});
    }
    if (auto envelope = checkEnvelope(*tx, chainId_, height, verified); !envelope) {
        return failed(envelope.error());
    }
    GL_ASSIGN_OR_RETURN(sender, loadAccount(state, tx->sender));
    if (tx->body.nonce != sender.nonce) {
        return failed(
            Error{tx->body.nonce < sender.nonce ? ErrorCode::kNonceTooLow : ErrorCode::kNonceGap,
                  "expected nonce " + std::to_string(sender.nonce)});
    }
    // From here the nonce is consumed, whether the payload succeeds or not.
    auto events = runPayload(state, *tx);
    if (!events && (events.error().code == ErrorCode::kStorage ||
                    events.error().code == ErrorCode::kCorrupt)) {
        return std::unexpected(events.error());
    }
    GL_ASSIGN_OR_RETURN(after, loadAccount(state, tx->sender));
    after.nonce = sender.nonce + 1;
    storeAccount(state, tx->sender, after);
    if (!events) {
        return failed(events.error());
    }
    receipt.events = std::move(*events);
    return receipt;
}

Result<ExecutedBlock> Executor::executeAndCommit(const codec::Block& block,
                                                 const codec::QuorumCert& certifyingQc,
                                                 const VerifiedCache& verified) {
    GL_ASSIGN_OR_RETURN(executed, blocks_.executedHeight());
    const std::uint64_t height = block.header.height;
    if (!executed || height != *executed + 1) {
        return fail(ErrorCode::kInvalidBlock,
                    "block at height " + std::to_string(height) + " is not the next to execute");
    }
    StateLayer state(tree_, *executed);
    std::vector<codec::Receipt> receipts;
    receipts.reserve(block.txs.size());
    std::set<Hash256> seen;
    for (std::size_t i = 0; i < block.txs.size(); ++i) {
        GL_ASSIGN_OR_RETURN(receipt, executeTx(state, height, static_cast<std::uint32_t>(i),
                                               block.txs[i], verified, seen));
        receipts.push_back(std::move(receipt));
    }
    return commit(block, certifyingQc, state, std::move(receipts));
}

Result<ExecutedBlock> Executor::commit(const codec::Block& block,
                                       const codec::QuorumCert& certifyingQc,
                                       const StateLayer& state,
                                       std::vector<codec::Receipt> receipts) {
    auto batch = store_.batch();
    const auto updates = state.updates();
    GL_ASSIGN_OR_RETURN(stateRoot, tree_.apply(block.header.height, updates, batch));
    const ledger::ExecRoots roots{stateRoot, resultsRoot(receipts)};
    blocks_.stageExecuted(batch, block, certifyingQc, receipts, roots);
    GL_TRY(store_.write(batch, true));
    return ExecutedBlock{block.header.height, std::move(receipts), roots};
}

}  // namespace gridledger::contracts
