// Certified batches in the simulator (docs/protocol.md §14): members pack arriving transactions
// into batches, the members asked verify every signature and acknowledge, f + 1
// acknowledgements certify, proposals carry certificates, and a member that lacks a batch's data
// fetches it from the certificate's signers before it hands the block to its core.
#include <algorithm>
#include <string>

#include "sim/simulator.h"

namespace gridledger::sim {
namespace {

/** A transaction of the simulator whose signature is bad. */
constexpr std::string_view kBadTx = "bad/";
constexpr std::string_view kCertTag = "batch-cert";

/** A transaction's signature check, simulated: only forgers make bad ones. */
bool signatureValid(const Bytes& tx) {
    return !std::equal(
        kBadTx.begin(), kBadTx.end(), tx.begin(),
        tx.begin() + static_cast<std::ptrdiff_t>(std::min(tx.size(), kBadTx.size())));
}

/** A certificate as one entry of a block's transaction list. */
Bytes certEntry(const consensus::BatchCert& cert) {
    Bytes out(kCertTag.begin(), kCertTag.end());
    appendU64(out, cert.epoch);
    out.insert(out.end(), cert.digest.view().begin(), cert.digest.view().end());
    appendU32(out, static_cast<std::uint32_t>(cert.signers.size()));
    out.insert(out.end(), cert.signers.begin(), cert.signers.end());
    appendU32(out, static_cast<std::uint32_t>(cert.signatures.size()));
    for (const auto& signature : cert.signatures) {
        out.insert(out.end(), signature.view().begin(), signature.view().end());
    }
    return out;
}

/** The certificate of a block entry; fails on anything certEntry did not make. */
Result<consensus::BatchCert> certOf(const Bytes& entry) {
    const auto malformed = [] { return fail(ErrorCode::kMalformed, "not a batch certificate"); };
    ByteView in(entry);
    const auto take = [&](std::size_t count) -> std::optional<ByteView> {
        if (in.size() < count) {
            return std::nullopt;
        }
        const ByteView out = in.first(count);
        in = in.subspan(count);
        return out;
    };
    const auto tag = take(kCertTag.size());
    if (!tag || !std::equal(tag->begin(), tag->end(), kCertTag.begin())) {
        return malformed();
    }
    consensus::BatchCert cert;
    const auto epoch = take(8);
    const auto digest = take(Hash256::size());
    const auto bitmapSize = take(4);
    if (!epoch || !digest || !bitmapSize) {
        return malformed();
    }
    cert.epoch = readU64(*epoch);
    cert.digest = Hash256::fromBytes(*digest).value();
    const auto bitmap = take(readU32(*bitmapSize));
    const auto count = bitmap ? take(4) : std::nullopt;
    if (!count) {
        return malformed();
    }
    cert.signers.assign(bitmap->begin(), bitmap->end());
    for (std::uint32_t k = readU32(*count); k > 0; --k) {
        const auto signature = take(Signature::size());
        if (!signature) {
            return malformed();
        }
        cert.signatures.push_back(Signature::fromBytes(*signature).value());
    }
    if (!in.empty()) {
        return malformed();
    }
    return cert;
}

}  // namespace

void Simulator::makeBatch(std::size_t i, std::size_t count) {
    Instance& inst = instances_[i];
    const consensus::Committee& committee = inst.core()->committee();
    const auto author = committee.indexOf(keys_.publicKey(inst.key));
    if (!author) {
        return;  // not a member: it gossips, it does not pack batches
    }
    auto batch = std::make_shared<consensus::Batch>();
    batch->author = keys_.publicKey(inst.key);
    batch->epoch = committee.epoch();
    batch->serial = inst.batchSerial++;
    const std::string prefix = "tx/i" + std::to_string(i) + "/b" + std::to_string(batch->serial);
    for (std::size_t k = 0; k < count; ++k) {
        const std::string tx = prefix + "/" + std::to_string(k);
        batch->txs.emplace_back(tx.begin(), tx.end());
    }
    const bool forger = inst.role == Role::kBatchForger;
    if (forger) {
        const std::string bad = std::string(kBadTx) + "i" + std::to_string(i);
        batch->txs.emplace_back(bad.begin(), bad.end());
    }
    const Hash256 digest = consensus::batchDigest(*batch);
    inst.store.batches.emplace(digest, batch);
    batchMadeAt_.try_emplace(digest, now_);
    // The author verified its transactions at admission and signs at once; a forger signs its
    // own bad batch all the same.
    batchTxsVerified_ += forger ? 0 : batch->txs.size();
    inst.acks[digest].emplace(
        *author, keys_.sign(inst.key, consensus::batchAckDigest(scenario_.options.chainId,
                                                                batch->epoch, digest)));
    std::set<std::size_t> silent;
    for (const auto& key : inst.silent) {
        if (const auto member = committee.indexOf(key)) {
            silent.insert(*member);
        }
    }
    const auto asked = consensus::batchSigners(committee, digest, *author, silent);
    inst.awaiting[digest].insert(asked.begin() + 1, asked.end());
    for (std::size_t j = 0; j < instances_.size(); ++j) {
        if (j == i) {
            continue;
        }
        const auto member = committee.indexOf(keys_.publicKey(instances_[j].key));
        const bool sign =
            forger || (member && std::find(asked.begin(), asked.end(), *member) != asked.end());
        if (inst.role == Role::kBatchHoarder && !sign) {
            continue;  // the hoarder gives its data to the signers it asks, nobody else
        }
        send(i, j, BatchPut{batch, sign});
    }
    schedule(now_ + scenario_.batchAckRetryMs,
             Item{i, inst.incarnation, BatchTimer{digest, false}});
    onBatchAck(i, BatchAck{digest, *author, inst.acks[digest].at(*author)});
}

void Simulator::onBatchPut(std::size_t i, std::size_t from, const BatchPut& put) {
    Instance& inst = instances_[i];
    const Hash256 digest = consensus::batchDigest(*put.batch);
    inst.store.batches.try_emplace(digest, put.batch);
    releaseHeld(i, digest);
    if (!put.sign || !inst.core()) {
        return;
    }
    const consensus::Committee& committee = inst.core()->committee();
    const auto member = committee.indexOf(keys_.publicKey(inst.key));
    if (!member || put.batch->epoch != committee.epoch()) {
        return;
    }
    const bool forgerAuthor = instances_[from].role == Role::kBatchForger;
    if (inst.role == Role::kBatchForger) {
        if (!forgerAuthor) {
            return;  // it withholds its acknowledgement from honest batches
        }
    } else {
        batchTxsVerified_ += put.batch->txs.size();
        if (!std::all_of(put.batch->txs.begin(), put.batch->txs.end(), signatureValid)) {
            ++refusedBatches_;
            return;
        }
    }
    const Signature signature = keys_.sign(
        inst.key, consensus::batchAckDigest(scenario_.options.chainId, put.batch->epoch, digest));
    send(i, from, BatchAck{digest, *member, signature});
}

void Simulator::onBatchAck(std::size_t i, const BatchAck& ack) {
    Instance& inst = instances_[i];
    if (!inst.core()) {
        return;
    }
    const consensus::Committee& committee = inst.core()->committee();
    const auto pending = inst.acks.find(ack.digest);
    const auto awaiting = inst.awaiting.find(ack.digest);
    const bool awaited = awaiting != inst.awaiting.end() && awaiting->second.contains(ack.member);
    const bool silent =
        ack.member < committee.size() && inst.silent.contains(committee.member(ack.member));
    if (pending == inst.acks.end() && !awaited && !silent) {
        return;  // certified already, or not this member's batch
    }
    if (ack.member >= committee.size() ||
        !keys_.verify(
            committee.member(ack.member),
            consensus::batchAckDigest(scenario_.options.chainId, committee.epoch(), ack.digest),
            ack.signature)) {
        return;
    }
    // An answer, even to a batch certified since, shows the member answers.
    if (awaited) {
        awaiting->second.erase(ack.member);
    }
    inst.silent.erase(committee.member(ack.member));
    if (pending == inst.acks.end()) {
        return;
    }
    pending->second.emplace(ack.member, ack.signature);
    std::optional<consensus::BatchCert> cert;
    if (inst.role == Role::kBatchForger) {
        // A forger makes a certificate of whatever its accomplices signed, one of them at least.
        if (pending->second.size() >= std::max<std::size_t>(committee.maxFaulty(), 1)) {
            consensus::BatchCert forged;
            forged.epoch = committee.epoch();
            forged.digest = ack.digest;
            forged.signers.assign((committee.size() + 7) / 8, 0);
            for (const auto& [member, signature] : pending->second) {
                forged.signers[member / 8] =
                    static_cast<std::uint8_t>(forged.signers[member / 8] | (1U << (member % 8)));
                forged.signatures.push_back(signature);
            }
            cert = forged;
            inst.forgedCert = forged;
        }
    } else if (auto built = consensus::buildBatchCert(committee, ack.digest, pending->second)) {
        cert = *built;
    }
    if (!cert) {
        return;
    }
    inst.acks.erase(pending);
    inst.certs.push_back(*cert);
    local(i, consensus::PayloadAvailable{});
    broadcast(i, BatchCertMsg{*cert});
}

Status Simulator::onBatchCert(std::size_t i, const consensus::BatchCert& cert) {
    GL_TRY(verifier_.batchCert(cert));
    Instance& inst = instances_[i];
    const bool known = std::any_of(inst.certs.begin(), inst.certs.end(),
                                   [&](const auto& held) { return held.digest == cert.digest; });
    if (!known && !inst.store.executedBatches.contains(cert.digest)) {
        inst.certs.push_back(cert);
        local(i, consensus::PayloadAvailable{});
    }
    return {};
}

void Simulator::onBatchRequest(std::size_t i, std::size_t from, const Hash256& digest) {
    const Instance& inst = instances_[i];
    if (inst.role == Role::kBatchHoarder) {
        return;  // it answers no request for data
    }
    if (const auto it = inst.store.batches.find(digest); it != inst.store.batches.end()) {
        send(i, from, BatchReply{it->second});
    }
}

void Simulator::onBatchReply(std::size_t i, const std::shared_ptr<const consensus::Batch>& batch) {
    Instance& inst = instances_[i];
    const Hash256 digest = consensus::batchDigest(*batch);
    if (inst.fetching.erase(digest) == 0) {
        return;  // not asked for (or arrived already): the digest names the data, nothing else
    }
    inst.store.batches.try_emplace(digest, batch);
    releaseHeld(i, digest);
}

void Simulator::batchTimer(std::size_t i, const BatchTimer& timer) {
    Instance& inst = instances_[i];
    if (!timer.fetch) {
        // The members asked that have not answered by now are slow or down: the next batches
        // pass over them until they answer.
        if (!inst.core()) {
            inst.awaiting.erase(timer.digest);
            return;
        }
        const consensus::Committee& committee = inst.core()->committee();
        if (const auto awaiting = inst.awaiting.find(timer.digest);
            awaiting != inst.awaiting.end()) {
            for (const auto member : awaiting->second) {
                if (member < committee.size()) {
                    inst.silent.insert(committee.member(member));
                }
            }
            inst.awaiting.erase(awaiting);
        }
        const auto pending = inst.acks.find(timer.digest);
        const auto data = inst.store.batches.find(timer.digest);
        if (pending == inst.acks.end() || data == inst.store.batches.end()) {
            return;
        }
        // This one goes to every member that has not signed.
        std::set<std::size_t>& asked = inst.awaiting[timer.digest];
        for (std::size_t j = 0; j < instances_.size(); ++j) {
            const auto member = committee.indexOf(keys_.publicKey(instances_[j].key));
            if (j != i && member && !pending->second.contains(*member)) {
                send(i, j, BatchPut{data->second, true});
                asked.insert(*member);
            }
        }
        schedule(now_ + scenario_.batchAckRetryMs, Item{i, inst.incarnation, timer});
        return;
    }
    const auto it = inst.fetching.find(timer.digest);
    if (it == inst.fetching.end()) {
        return;
    }
    Instance::Fetching& fetching = it->second;
    const std::size_t signer = fetching.signers[fetching.next++ % fetching.signers.size()];
    ++batchFetches_;
    send(i, signer, BatchRequest{timer.digest});
    schedule(now_ + scenario_.batchFetchRetryMs, Item{i, inst.incarnation, timer});
}

Result<std::set<Hash256>> Simulator::missingBatches(std::size_t i, const codec::Block& block) {
    std::set<Hash256> missing;
    for (const auto& entry : block.txs) {
        GL_ASSIGN_OR_RETURN(cert, certOf(entry));
        GL_TRY(verifier_.batchCert(cert));
        if (!instances_[i].store.batches.contains(cert.digest)) {
            missing.insert(cert.digest);
            fetchBatch(i, cert);
        }
    }
    return missing;
}

std::vector<std::size_t> Simulator::signerInstances(const consensus::BatchCert& cert) const {
    const consensus::Committee& committee = committees_.at(cert.epoch);
    std::vector<std::size_t> out;
    for (const auto member : consensus::batchCertSigners(cert, committee, scenario_.options.chainId,
                                                         verifier_.signatureCheck())
                                 .value_or(std::vector<std::size_t>{})) {
        const auto instances = instancesOf(committee.member(member));
        out.insert(out.end(), instances.begin(), instances.end());
    }
    return out;
}

void Simulator::fetchBatch(std::size_t i, const consensus::BatchCert& cert) {
    Instance& inst = instances_[i];
    if (inst.fetching.contains(cert.digest)) {
        return;
    }
    Instance::Fetching fetching;
    for (const auto j : signerInstances(cert)) {
        if (j != i) {
            fetching.signers.push_back(j);
        }
    }
    if (fetching.signers.empty()) {
        return;
    }
    inst.fetching.emplace(cert.digest, std::move(fetching));
    batchTimer(i, BatchTimer{cert.digest, true});
}

consensus::ProposalPayload Simulator::collectCerts(std::size_t i) {
    Instance& inst = instances_[i];
    std::erase_if(inst.certs, [&](const consensus::BatchCert& cert) {
        return inst.store.executedBatches.contains(cert.digest);
    });
    consensus::ProposalPayload payload;
    if (inst.forgedCert) {
        payload.txs.push_back(certEntry(*inst.forgedCert));
    }
    for (const auto& cert : inst.certs) {
        if (payload.txs.size() == scenario_.certsPerBlock) {
            payload.more = true;
            break;
        }
        payload.txs.push_back(certEntry(cert));
    }
    return payload;
}

void Simulator::executeBatches(std::size_t i, const codec::Block& block) {
    Store& st = instances_[i].store;
    for (const auto& entry : block.txs) {
        const auto cert = certOf(entry);
        if (!cert) {
            checker_.flag("batch-validity",
                          "instance=i" + std::to_string(i) +
                              " executes an entry that is no batch certificate",
                          now_);
            return;
        }
        if (!st.executedBatches.insert(cert->digest).second) {
            continue;  // proposed again before the first block that held it committed
        }
        auto data = st.batches.find(cert->digest);
        if (data == st.batches.end()) {
            // The node fetches it from the certificate's signers before it executes: one of them,
            // at least, is honest and holds it.
            for (const auto j : signerInstances(*cert)) {
                const Instance& signer = instances_[j];
                const auto held = signer.store.batches.find(cert->digest);
                if (signer.role != Role::kBatchHoarder && held != signer.store.batches.end()) {
                    data = st.batches.emplace(cert->digest, held->second).first;
                    break;
                }
            }
        }
        if (data == st.batches.end()) {
            checker_.flag("batch-availability",
                          "instance=i" + std::to_string(i) + " cannot get the data of a batch " +
                              "its certificate's signers should hold",
                          now_);
            continue;
        }
        const consensus::Batch& batch = *data->second;
        if (!std::all_of(batch.txs.begin(), batch.txs.end(), signatureValid)) {
            checker_.flag("batch-validity",
                          "instance=i" + std::to_string(i) + " executes a certified batch of i" +
                              std::to_string(keys_.indexOf(batch.author)) +
                              " holding a transaction with a bad signature",
                          now_);
        }
        if (executedBatches_.insert(cert->digest).second) {
            batchTxsExecuted_ += batch.txs.size();
        }
        if (const auto made = batchMadeAt_.find(cert->digest); made != batchMadeAt_.end()) {
            batchExecutions_.push_back(BatchExecution{made->second, now_});
        }
    }
}

}  // namespace gridledger::sim
