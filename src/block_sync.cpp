#include "block_sync.h"

#include <algorithm>

#include <gridledger/crypto/sha256.h>

namespace gridledger::node {

Result<codec::SyncResponse> serveSync(const ledger::ChainReader& blocks,
                                      const codec::SyncRequest& request, std::uint64_t maxBlocks) {
    codec::SyncResponse response;
    GL_ASSIGN_OR_RETURN(executed, blocks.executedHeight());
    response.headHeight = executed.value_or(0);
    if (request.fromHeight == 0 || request.fromHeight > response.headHeight) {
        return response;
    }
    const std::uint64_t available = response.headHeight - request.fromHeight + 1;
    const std::uint64_t wanted =
        std::min<std::uint64_t>({maxBlocks, request.maxBlocks, codec::kMaxSyncBlocks, available});
    // Past `wanted` only while no block so far has a commit proof: a node that synced in larger
    // batches holds proofs further apart, and an answer without blocks would end the sync.
    const std::uint64_t reach =
        wanted == 0 ? 0 : std::min<std::uint64_t>(codec::kMaxSyncBlocks, available);
    std::size_t bytes = 0;
    std::size_t provenCount = 0;
    for (std::uint64_t i = 0; i < reach && (i < wanted || provenCount == 0); ++i) {
        const std::uint64_t height = request.fromHeight + i;
        GL_ASSIGN_OR_RETURN(block, blocks.blockAt(height));
        if (!block) {
            return fail(ErrorCode::kCorrupt, "committed block " + std::to_string(height) +
                                                 " is missing below the executed height");
        }
        std::size_t blockBytes = block->headerBytes.size();
        for (const auto& tx : block->txs) {
            blockBytes += tx.size();
        }
        // A block that would pass the budget waits for the next request (unless it is the
        // first), so that an answer never holds more than the budget or one block.
        if (i > 0 && bytes + blockBytes > kMaxSyncResponseBytes) {
            break;
        }
        // An answer stays in one epoch: the asker checks it against one committee and learns
        // the next one by executing the block that ends this epoch (docs/protocol.md §12).
        if (i > 0 && block->header.epoch != response.blocks.front().header.epoch) {
            break;
        }
        bytes += blockBytes;
        response.blocks.push_back(std::move(*block));
        GL_ASSIGN_OR_RETURN(proof, blocks.commitProofAt(height));
        if (proof) {
            response.proof = std::move(proof);
            provenCount = response.blocks.size();
        }
    }
    response.blocks.resize(provenCount);
    return response;
}

std::vector<HeightProof> chainedCommitProofs(const std::vector<const codec::Block*>& blocks,
                                             const std::vector<const codec::QuorumCert*>& certs) {
    std::vector<HeightProof> proofs;
    for (std::size_t i = 0; i + 1 < blocks.size() && i + 1 < certs.size(); ++i) {
        const codec::Block& block = *blocks[i];
        const codec::Block& child = *blocks[i + 1];
        if (child.header.round != block.header.round + 1 || child.header.parentId != block.id ||
            certs[i + 1]->blockId != child.id) {
            continue;
        }
        auto proof = codec::makeCommitProof(child.headerBytes, *certs[i + 1]);
        if (proof) {
            proofs.push_back(HeightProof{block.header.height, std::move(*proof)});
        }
    }
    return proofs;
}

std::vector<HeightProof> commitProofsOf(const consensus::Commit& commit,
                                        std::optional<std::size_t> endedEpochAt,
                                        const Bytes* childHeaderBytes,
                                        std::uint64_t executedHeight) {
    if (commit.blocks.empty()) {
        return {};
    }
    std::vector<const codec::Block*> blocks;
    std::vector<const codec::QuorumCert*> certs;
    for (std::size_t i = 0; i < commit.blocks.size(); ++i) {
        blocks.push_back(commit.blocks[i].get());
        certs.push_back(i + 1 < commit.blocks.size() ? &commit.blocks[i + 1]->header.qc
                                                     : &commit.qc);
    }
    auto proofs = chainedCommitProofs(blocks, certs);
    const std::size_t last = endedEpochAt.value_or(commit.blocks.size() - 1);
    const std::uint64_t lastHeight = blocks[last]->header.height;
    if (childHeaderBytes != nullptr &&
        std::none_of(proofs.begin(), proofs.end(),
                     [&](const HeightProof& p) { return p.height == lastHeight; })) {
        auto proof = commitProofInCommit(blocks, last, *childHeaderBytes, commit.commitQc);
        if (proof) {
            proofs.push_back(HeightProof{lastHeight, std::move(*proof)});
        }
    }
    // Heights above the block that ended the epoch belong to the next epoch's blocks.
    std::erase_if(proofs,
                  [executedHeight](const HeightProof& p) { return p.height > executedHeight; });
    return proofs;
}

Result<codec::CommitProof> commitProofInCommit(const std::vector<const codec::Block*>& blocks,
                                               std::size_t index, Bytes childHeaderBytes,
                                               const codec::QuorumCert& commitQc) {
    std::vector<Bytes> path;
    for (std::size_t i = index + 1; i < blocks.size(); ++i) {
        path.push_back(blocks[i]->headerBytes);
    }
    return codec::makeCommitProof(std::move(childHeaderBytes), commitQc, std::move(path));
}

Result<VerifiedBlocks> verifySyncResponse(codec::SyncResponse response, std::uint64_t headHeight,
                                          const Hash256& headId,
                                          const consensus::Committee& committee,
                                          std::string_view chainId,
                                          const consensus::SignatureCheck& check) {
    if (response.blocks.empty() || !response.proof) {
        return fail(ErrorCode::kInvalidBlock, response.blocks.empty()
                                                  ? "sync response carries no blocks"
                                                  : "sync response carries no commit proof");
    }
    VerifiedBlocks out;
    Hash256 parentId = headId;
    for (std::size_t i = 0; i < response.blocks.size(); ++i) {
        const codec::Block& block = response.blocks[i];
        const std::uint64_t height = headHeight + 1 + i;
        const std::string where = "synced block at height " + std::to_string(height);
        if (block.header.height != height || block.header.epoch != committee.epoch()) {
            return fail(ErrorCode::kInvalidBlock, where + " has another height or epoch");
        }
        if (block.header.parentId != parentId || block.header.qc.blockId != parentId ||
            (i > 0 && block.header.qc.round != response.blocks[i - 1].header.round)) {
            return fail(ErrorCode::kInvalidBlock, where + " does not extend the previous block");
        }
        if (auto verified = consensus::verifyQuorumCert(block.header.qc, committee, chainId, check);
            !verified) {
            return fail(verified.error().code, where + ": " + verified.error().message);
        }
        if (i > 0) {
            out.certs.push_back(block.header.qc);
        }
        parentId = block.id;
    }
    if (auto proven = consensus::verifyCommitProof(response.blocks.back(), *response.proof,
                                                   committee, chainId, check);
        !proven) {
        return fail(proven.error().code, "synced block at height " +
                                             std::to_string(headHeight + response.blocks.size()) +
                                             ": " + proven.error().message);
    }
    out.certs.push_back(consensus::certifyingQcOf(*response.proof));
    out.blocks = std::move(response.blocks);
    out.proof = std::move(*response.proof);
    return out;
}

Result<std::size_t> applySyncedBlocks(
    const VerifiedBlocks& verified,
    const std::function<Result<bool>(const codec::Block&, const codec::QuorumCert&)>& execute) {
    for (std::size_t i = 0; i < verified.blocks.size(); ++i) {
        GL_ASSIGN_OR_RETURN(ended, execute(verified.blocks[i], verified.certs[i]));
        if (ended) {
            return i + 1;
        }
    }
    return verified.blocks.size();
}

std::vector<HeightProof> syncedCommitProofs(const VerifiedBlocks& verified, std::size_t executed) {
    executed = std::min(executed, verified.blocks.size());
    std::vector<const codec::Block*> blocks;
    std::vector<const codec::QuorumCert*> certs;
    for (std::size_t i = 0; i < executed; ++i) {
        blocks.push_back(&verified.blocks[i]);
        certs.push_back(&verified.certs[i]);
    }
    auto proofs = chainedCommitProofs(blocks, certs);
    if (executed == verified.blocks.size() && executed > 0) {
        proofs.push_back(HeightProof{verified.blocks.back().header.height, verified.proof});
    }
    return proofs;
}

Result<std::optional<codec::Block>> lastBlockOfEpoch(const ledger::ChainReader& blocks,
                                                     std::uint64_t epoch,
                                                     std::uint64_t executedHeight) {
    // The highest height in [low, high] whose block's epoch is at most `epoch`, once found.
    std::optional<codec::Block> found;
    std::uint64_t low = 0;
    std::uint64_t high = executedHeight;
    while (low <= high) {
        const std::uint64_t middle = low + (high - low) / 2;
        GL_ASSIGN_OR_RETURN(block, blocks.blockAt(middle));
        if (!block) {
            return fail(ErrorCode::kCorrupt, "committed block " + std::to_string(middle) +
                                                 " is missing below the executed height");
        }
        if (block->header.epoch > epoch) {
            if (middle == 0) {
                break;
            }
            high = middle - 1;
        } else {
            found = std::move(*block);
            low = middle + 1;
        }
    }
    if (found && found->header.epoch != epoch) {
        found.reset();
    }
    return found;
}

Result<std::optional<codec::EpochProof>> epochProofOf(const ledger::ChainReader& blocks,
                                                      const codec::Block& reconfig) {
    GL_ASSIGN_OR_RETURN(proof, blocks.commitProofAt(reconfig.header.height));
    if (!proof) {
        return std::optional<codec::EpochProof>{};
    }
    return std::optional<codec::EpochProof>{codec::EpochProof{
        codec::ProofHeader{reconfig.header, reconfig.headerBytes, reconfig.id}, std::move(*proof)}};
}

Result<std::optional<codec::EpochProof>> epochProofFor(const ledger::ChainReader& blocks,
                                                       std::uint64_t epoch,
                                                       std::uint64_t currentEpoch) {
    if (epoch >= currentEpoch) {
        return std::optional<codec::EpochProof>{};  // that epoch has not ended here
    }
    GL_ASSIGN_OR_RETURN(executed, blocks.executedHeight());
    GL_ASSIGN_OR_RETURN(reconfig, lastBlockOfEpoch(blocks, epoch, executed.value_or(0)));
    if (!reconfig) {
        return std::optional<codec::EpochProof>{};
    }
    return epochProofOf(blocks, *reconfig);
}

Status verifyEpochProof(const codec::EpochProof& proof, const consensus::Committee& committee,
                        std::string_view chainId, const consensus::SignatureCheck& check) {
    if (proof.reconfig.header.epoch != committee.epoch()) {
        return fail(ErrorCode::kWrongEpoch, "epoch proof of epoch " +
                                                std::to_string(proof.reconfig.header.epoch) +
                                                ", not " + std::to_string(committee.epoch()));
    }
    if (crypto::sha256(proof.reconfig.headerBytes) != proof.reconfig.id) {
        return fail(ErrorCode::kInvalidBlock, "epoch proof's block id is not its header's hash");
    }
    codec::Block reconfig;
    reconfig.header = proof.reconfig.header;
    reconfig.headerBytes = proof.reconfig.headerBytes;
    reconfig.id = proof.reconfig.id;
    return consensus::verifyCommitProof(reconfig, proof.proof, committee, chainId, check);
}

}  // namespace gridledger::node
