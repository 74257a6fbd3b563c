#include <algorithm>

#include <gridledger/codec/block.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/proto/chain.pb.h>

#include "pb_util.h"

namespace gridledger::codec {
namespace {

using detail::fixed;
using detail::str;

constexpr std::uint8_t kLeafPrefix = 0x00;
constexpr std::uint8_t kNodePrefix = 0x01;

void qcToProto(const QuorumCert& qc, proto::QuorumCert& pb) {
    pb.set_epoch(qc.epoch);
    pb.set_round(qc.round);
    pb.set_block_id(str(qc.blockId.view()));
    pb.set_signers(str(qc.signers));
    for (const auto& sig : qc.signatures) {
        pb.add_signatures(str(sig.view()));
    }
}

Result<std::vector<Signature>> signaturesFromProto(
    const google::protobuf::RepeatedPtrField<std::string>& sigs) {
    std::vector<Signature> out;
    out.reserve(static_cast<std::size_t>(sigs.size()));
    for (const auto& sig : sigs) {
        GL_ASSIGN_OR_RETURN(parsed, fixed<Signature>(sig, "signature"));
        out.push_back(parsed);
    }
    return out;
}

Result<QuorumCert> qcFromProto(const proto::QuorumCert& pb) {
    QuorumCert qc;
    qc.epoch = pb.epoch();
    qc.round = pb.round();
    GL_ASSIGN_OR_RETURN(blockId, fixed<Hash256>(pb.block_id(), "qc.block_id"));
    qc.blockId = blockId;
    qc.signers.assign(pb.signers().begin(), pb.signers().end());
    GL_ASSIGN_OR_RETURN(sigs, signaturesFromProto(pb.signatures()));
    qc.signatures = std::move(sigs);
    return qc;
}

void tcToProto(const TimeoutCert& tc, proto::TimeoutCert& pb) {
    pb.set_epoch(tc.epoch);
    pb.set_round(tc.round);
    pb.set_signers(str(tc.signers));
    for (auto round : tc.hqcRounds) {
        pb.add_hqc_rounds(round);
    }
    for (const auto& sig : tc.signatures) {
        pb.add_signatures(str(sig.view()));
    }
    qcToProto(tc.highQc, *pb.mutable_high_qc());
}

Result<TimeoutCert> tcFromProto(const proto::TimeoutCert& pb) {
    TimeoutCert tc;
    tc.epoch = pb.epoch();
    tc.round = pb.round();
    tc.signers.assign(pb.signers().begin(), pb.signers().end());
    tc.hqcRounds.assign(pb.hqc_rounds().begin(), pb.hqc_rounds().end());
    GL_ASSIGN_OR_RETURN(sigs, signaturesFromProto(pb.signatures()));
    tc.signatures = std::move(sigs);
    if (tc.hqcRounds.size() != tc.signatures.size()) {
        return fail(ErrorCode::kMalformed,
                    "timeout certificate has mismatched rounds and signatures");
    }
    if (!pb.has_high_qc()) {
        return fail(ErrorCode::kMalformed, "timeout certificate carries no high qc");
    }
    GL_ASSIGN_OR_RETURN(highQc, qcFromProto(pb.high_qc()));
    tc.highQc = std::move(highQc);
    return tc;
}

Result<BlockHeader> headerFromProto(const proto::BlockHeader& pb) {
    BlockHeader h;
    h.epoch = pb.epoch();
    h.round = pb.round();
    h.height = pb.height();
    GL_ASSIGN_OR_RETURN(parent, fixed<Hash256>(pb.parent_id(), "parent_id"));
    h.parentId = parent;
    GL_ASSIGN_OR_RETURN(qc, qcFromProto(pb.qc()));
    h.qc = std::move(qc);
    if (pb.has_tc()) {
        GL_ASSIGN_OR_RETURN(tc, tcFromProto(pb.tc()));
        h.tc = std::move(tc);
    }
    GL_ASSIGN_OR_RETURN(author, fixed<PubKey>(pb.author(), "author"));
    h.author = author;
    h.timestampMs = pb.timestamp_ms();
    GL_ASSIGN_OR_RETURN(txsRoot, fixed<Hash256>(pb.txs_root(), "txs_root"));
    h.txsRoot = txsRoot;
    h.txCount = pb.tx_count();
    h.execHeight = pb.exec_height();
    GL_ASSIGN_OR_RETURN(stateRoot, fixed<Hash256>(pb.exec_state_root(), "exec_state_root"));
    h.execStateRoot = stateRoot;
    GL_ASSIGN_OR_RETURN(resultsRoot, fixed<Hash256>(pb.exec_results_root(), "exec_results_root"));
    h.execResultsRoot = resultsRoot;
    return h;
}

Hash256 hashPair(const Hash256& left, const Hash256& right) {
    crypto::Sha256 h;
    const std::uint8_t prefix = kNodePrefix;
    h.update(ByteView(&prefix, 1)).update(left.view()).update(right.view());
    return h.finish();
}

std::vector<Hash256> txHashes(const std::vector<Bytes>& txs) {
    std::vector<Hash256> out;
    out.reserve(txs.size());
    for (const auto& tx : txs) {
        out.push_back(crypto::sha256(tx));
    }
    return out;
}

}  // namespace

std::uint64_t TimeoutCert::highestHqcRound() const {
    return hqcRounds.empty() ? 0 : *std::max_element(hqcRounds.begin(), hqcRounds.end());
}

Bytes voteSigningBody(std::uint64_t epoch, std::uint64_t round, const Hash256& blockId) {
    Bytes out;
    appendU64(out, epoch);
    appendU64(out, round);
    append(out, blockId.view());
    return out;
}

Bytes timeoutSigningBody(std::uint64_t epoch, std::uint64_t round, std::uint64_t hqcRound) {
    Bytes out;
    appendU64(out, epoch);
    appendU64(out, round);
    appendU64(out, hqcRound);
    return out;
}

Hash256 merkleRoot(const std::vector<Hash256>& leaves) {
    if (leaves.empty()) {
        return Hash256{};
    }
    std::vector<Hash256> level;
    level.reserve(leaves.size());
    for (const auto& leaf : leaves) {
        crypto::Sha256 h;
        const std::uint8_t prefix = kLeafPrefix;
        h.update(ByteView(&prefix, 1)).update(leaf.view());
        level.push_back(h.finish());
    }
    while (level.size() > 1) {
        std::vector<Hash256> next;
        next.reserve((level.size() + 1) / 2);
        for (std::size_t i = 0; i + 1 < level.size(); i += 2) {
            next.push_back(hashPair(level[i], level[i + 1]));
        }
        if (level.size() % 2 == 1) {
            next.push_back(level.back());  // an odd node moves up unchanged, never duplicated
        }
        level = std::move(next);
    }
    return level.front();
}

Bytes encodeHeader(const BlockHeader& h) {
    proto::BlockHeader pb;
    pb.set_epoch(h.epoch);
    pb.set_round(h.round);
    pb.set_height(h.height);
    pb.set_parent_id(str(h.parentId.view()));
    qcToProto(h.qc, *pb.mutable_qc());
    if (h.tc) {
        tcToProto(*h.tc, *pb.mutable_tc());
    }
    pb.set_author(str(h.author.view()));
    pb.set_timestamp_ms(h.timestampMs);
    pb.set_txs_root(str(h.txsRoot.view()));
    pb.set_tx_count(h.txCount);
    pb.set_exec_height(h.execHeight);
    pb.set_exec_state_root(str(h.execStateRoot.view()));
    pb.set_exec_results_root(str(h.execResultsRoot.view()));
    return detail::serialize(pb);
}

Block makeBlock(const BlockHeader& header, std::vector<Bytes> txs) {
    Block block;
    block.header = header;
    block.header.txsRoot = merkleRoot(txHashes(txs));
    block.header.txCount = static_cast<std::uint32_t>(txs.size());
    block.headerBytes = encodeHeader(block.header);
    block.id = crypto::sha256(block.headerBytes);
    block.txs = std::move(txs);
    return block;
}

Result<BlockHeader> decodeHeader(ByteView raw) {
    proto::BlockHeader pb;
    GL_TRY(detail::parse(pb, raw, "block header"));
    return headerFromProto(pb);
}

Bytes encodeBlock(const Block& block) {
    // Written straight into its bytes (pb_util.h), as proto::Block: a node encodes each block it
    // proposes, stores or serves, a thousand transactions of a few hundred bytes each.
    std::size_t size =
        detail::fieldSize(block.headerBytes.size()) + detail::fieldSize(Signature::size());
    for (const auto& tx : block.txs) {
        size += detail::fieldSize(tx.size());
    }
    Bytes out;
    out.reserve(size);
    if (!block.headerBytes.empty()) {
        detail::putBytes(out, 1, block.headerBytes);
    }
    for (const auto& tx : block.txs) {
        detail::putBytes(out, 2, tx);
    }
    detail::putBytes(out, 3, block.signature.view());
    return out;
}

Result<Block> decodeBlock(ByteView raw) {
    if (raw.size() > kMaxBlockBytes) {
        return fail(ErrorCode::kTooLarge, "block exceeds the size limit");
    }
    proto::Block pb;
    GL_TRY(detail::parse(pb, raw, "block"));
    proto::BlockHeader header;
    GL_TRY(detail::parse(header, asBytes(pb.header()), "block header"));
    Block block;
    GL_ASSIGN_OR_RETURN(decoded, headerFromProto(header));
    block.header = std::move(decoded);
    block.headerBytes.assign(pb.header().begin(), pb.header().end());
    block.id = crypto::sha256(block.headerBytes);
    block.txs.reserve(static_cast<std::size_t>(pb.txs_size()));
    for (const auto& tx : pb.txs()) {
        block.txs.emplace_back(tx.begin(), tx.end());
    }
    GL_ASSIGN_OR_RETURN(sig, fixed<Signature>(pb.signature(), "block signature"));
    block.signature = sig;
    if (block.header.txCount != block.txs.size() ||
        block.header.txsRoot != merkleRoot(txHashes(block.txs))) {
        return fail(ErrorCode::kInvalidBlock, "block transactions do not match the header");
    }
    return block;
}

Bytes encodeQc(const QuorumCert& qc) {
    proto::QuorumCert pb;
    qcToProto(qc, pb);
    return detail::serialize(pb);
}

Result<QuorumCert> decodeQc(ByteView raw) {
    proto::QuorumCert pb;
    GL_TRY(detail::parse(pb, raw, "quorum certificate"));
    return qcFromProto(pb);
}

Bytes encodeBatchCert(const BatchCert& cert) {
    proto::BatchCert pb;
    pb.set_epoch(cert.epoch);
    pb.set_digest(str(cert.digest.view()));
    pb.set_signers(str(cert.signers));
    for (const auto& sig : cert.signatures) {
        pb.add_signatures(str(sig.view()));
    }
    return detail::serialize(pb);
}

Result<BatchCert> decodeBatchCert(ByteView raw) {
    proto::BatchCert pb;
    GL_TRY(detail::parse(pb, raw, "batch certificate"));
    BatchCert cert;
    cert.epoch = pb.epoch();
    GL_ASSIGN_OR_RETURN(digest, fixed<Hash256>(pb.digest(), "batch_cert.digest"));
    cert.digest = digest;
    cert.signers.assign(pb.signers().begin(), pb.signers().end());
    GL_ASSIGN_OR_RETURN(sigs, signaturesFromProto(pb.signatures()));
    cert.signatures = std::move(sigs);
    return cert;
}

Bytes encodeTc(const TimeoutCert& tc) {
    proto::TimeoutCert pb;
    tcToProto(tc, pb);
    return detail::serialize(pb);
}

Result<TimeoutCert> decodeTc(ByteView raw) {
    proto::TimeoutCert pb;
    GL_TRY(detail::parse(pb, raw, "timeout certificate"));
    return tcFromProto(pb);
}

Result<ProofHeader> makeProofHeader(Bytes headerBytes) {
    GL_ASSIGN_OR_RETURN(header, decodeHeader(headerBytes));
    const Hash256 id = crypto::sha256(headerBytes);
    return ProofHeader{std::move(header), std::move(headerBytes), id};
}

Result<CommitProof> makeCommitProof(Bytes childHeaderBytes, QuorumCert commitQc,
                                    std::vector<Bytes> pathHeaderBytes) {
    if (pathHeaderBytes.size() > kMaxCommitProofPath) {
        return fail(ErrorCode::kMalformed, "commit proof path of " +
                                               std::to_string(pathHeaderBytes.size()) +
                                               " headers is longer than the limit");
    }
    CommitProof proof;
    proof.path.reserve(pathHeaderBytes.size());
    for (auto& bytes : pathHeaderBytes) {
        GL_ASSIGN_OR_RETURN(link, makeProofHeader(std::move(bytes)));
        proof.path.push_back(std::move(link));
    }
    GL_ASSIGN_OR_RETURN(header, decodeHeader(childHeaderBytes));
    proof.childHeader = std::move(header);
    proof.childId = crypto::sha256(childHeaderBytes);
    proof.childHeaderBytes = std::move(childHeaderBytes);
    proof.commitQc = std::move(commitQc);
    return proof;
}

Bytes encodeCommitProof(const CommitProof& proof) {
    proto::CommitProof pb;
    pb.set_child_header(str(proof.childHeaderBytes));
    qcToProto(proof.commitQc, *pb.mutable_commit_qc());
    for (const auto& link : proof.path) {
        pb.add_path_headers(str(link.headerBytes));
    }
    return detail::serialize(pb);
}

Result<CommitProof> decodeCommitProof(ByteView raw) {
    proto::CommitProof pb;
    GL_TRY(detail::parse(pb, raw, "commit proof"));
    GL_ASSIGN_OR_RETURN(qc, qcFromProto(pb.commit_qc()));
    if (static_cast<std::size_t>(pb.path_headers_size()) > kMaxCommitProofPath) {
        return fail(ErrorCode::kMalformed, "commit proof path is longer than the limit");
    }
    std::vector<Bytes> path;
    path.reserve(static_cast<std::size_t>(pb.path_headers_size()));
    for (const auto& header : pb.path_headers()) {
        path.emplace_back(header.begin(), header.end());
    }
    return makeCommitProof(Bytes(pb.child_header().begin(), pb.child_header().end()), std::move(qc),
                           std::move(path));
}

Bytes encodeVote(const Vote& vote) {
    proto::Vote pb;
    pb.set_epoch(vote.epoch);
    pb.set_round(vote.round);
    pb.set_block_id(str(vote.blockId.view()));
    pb.set_voter(str(vote.voter.view()));
    pb.set_signature(str(vote.signature.view()));
    return detail::serialize(pb);
}

Result<Vote> decodeVote(ByteView raw) {
    proto::Vote pb;
    GL_TRY(detail::parse(pb, raw, "vote"));
    Vote vote;
    vote.epoch = pb.epoch();
    vote.round = pb.round();
    GL_ASSIGN_OR_RETURN(blockId, fixed<Hash256>(pb.block_id(), "vote.block_id"));
    vote.blockId = blockId;
    GL_ASSIGN_OR_RETURN(voter, fixed<PubKey>(pb.voter(), "vote.voter"));
    vote.voter = voter;
    GL_ASSIGN_OR_RETURN(sig, fixed<Signature>(pb.signature(), "vote.signature"));
    vote.signature = sig;
    return vote;
}

Bytes encodeTimeout(const Timeout& timeout) {
    proto::Timeout pb;
    pb.set_epoch(timeout.epoch);
    pb.set_round(timeout.round);
    qcToProto(timeout.highQc, *pb.mutable_high_qc());
    pb.set_author(str(timeout.author.view()));
    pb.set_signature(str(timeout.signature.view()));
    return detail::serialize(pb);
}

Result<Timeout> decodeTimeout(ByteView raw) {
    proto::Timeout pb;
    GL_TRY(detail::parse(pb, raw, "timeout"));
    Timeout timeout;
    timeout.epoch = pb.epoch();
    timeout.round = pb.round();
    GL_ASSIGN_OR_RETURN(qc, qcFromProto(pb.high_qc()));
    timeout.highQc = std::move(qc);
    GL_ASSIGN_OR_RETURN(author, fixed<PubKey>(pb.author(), "timeout.author"));
    timeout.author = author;
    GL_ASSIGN_OR_RETURN(sig, fixed<Signature>(pb.signature(), "timeout.signature"));
    timeout.signature = sig;
    return timeout;
}

}  // namespace gridledger::codec
