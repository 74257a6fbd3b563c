#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include <gridledger/base/amount.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::consensus {
namespace {

constexpr std::string_view kLeaderTag = "sdbft/leader";
constexpr std::string_view kCommitteeTag = "sdbft/committee";
constexpr std::string_view kSeedTag = "sdbft/seed";

/** The 256-bit big-endian number `digest` reduced mod n (n > 0). */
std::size_t reduceMod(const Hash256& digest, std::size_t n) {
    const u128 modulus = n;
    u128 rem = 0;
    for (std::size_t i = 0; i < Hash256::size(); ++i) {
        rem = (rem * 256 + digest[i]) % modulus;
    }
    return static_cast<std::size_t>(rem);
}

Status checkDistinct(const std::vector<PubKey>& keys, std::string_view what) {
    if (keys.empty()) {
        return fail(ErrorCode::kInvalidArgument, std::string(what) + " is empty");
    }
    const std::set<PubKey> unique(keys.begin(), keys.end());
    if (unique.size() != keys.size()) {
        return fail(ErrorCode::kInvalidArgument, std::string(what) + " lists a key twice");
    }
    return {};
}

}  // namespace

std::size_t maxFaultyOf(std::size_t n) {
    return n == 0 ? 0 : (n - 1) / 3;
}

std::size_t quorumOf(std::size_t n) {
    return 2 * n / 3 + 1;
}

namespace {

Hash256 seedDigest(std::string_view chainId, std::uint64_t epoch, const Hash256& from) {
    Bytes body;
    appendU64(body, epoch);
    append(body, from.view());
    return crypto::signingDigest(kSeedTag, chainId, body);
}

}  // namespace

Hash256 nextEpochSeed(std::string_view chainId, std::uint64_t epoch, const Hash256& previous) {
    return seedDigest(chainId, epoch + 1, previous);
}

Hash256 epochSeedOf(std::string_view chainId, const Hash256& genesisBlockId, std::uint64_t epoch) {
    Hash256 seed = seedDigest(chainId, 0, genesisBlockId);
    for (std::uint64_t e = 0; e < epoch; ++e) {
        seed = nextEpochSeed(chainId, e, seed);
    }
    return seed;
}

Hash256 leaderSeedOf(std::string_view chainId, std::uint64_t epoch, const Hash256& epochSeed) {
    Bytes body;
    appendU64(body, epoch);
    append(body, epochSeed.view());
    return crypto::signingDigest(kLeaderTag, chainId, body);
}

Result<Committee> Committee::create(std::string_view chainId, std::uint64_t epoch,
                                    const Hash256& seedBlockId, std::vector<PubKey> members) {
    return create(chainId, epoch, seedBlockId, epochSeedOf(chainId, seedBlockId, epoch),
                  std::move(members));
}

Result<Committee> Committee::create(std::string_view chainId, std::uint64_t epoch,
                                    const Hash256& seedBlockId, const Hash256& epochSeed,
                                    std::vector<PubKey> members) {
    GL_TRY(checkDistinct(members, "committee"));
    Committee out;
    out.epoch_ = epoch;
    out.seedBlockId_ = seedBlockId;
    out.epochSeed_ = epochSeed;
    out.leaderSeed_ = leaderSeedOf(chainId, epoch, epochSeed);
    out.members_ = std::move(members);
    for (std::size_t i = 0; i < out.members_.size(); ++i) {
        out.index_.emplace(out.members_[i], i);
    }
    return out;
}

std::optional<std::size_t> Committee::indexOf(const PubKey& key) const {
    const auto it = index_.find(key);
    if (it == index_.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::size_t Committee::leaderIndex(std::uint64_t round) const {
    crypto::Sha256 h;
    h.update(leaderSeed_.view()).updateU64(round);
    return reduceMod(h.finish(), members_.size());
}

namespace {

/**
 * Sets marks[j] for every member j of `into` that a certificate of `by` names in its signer
 * bitmap (bit i is `by`'s member i).
 */
void markSigners(const Committee& by, const Bytes& bitmap, const Committee& into,
                 std::vector<bool>& marks) {
    for (std::size_t i = 0; i < by.size() && i / 8 < bitmap.size(); ++i) {
        if (((static_cast<unsigned>(bitmap[i / 8]) >> (i % 8)) & 1U) == 0) {
            continue;
        }
        if (&by == &into) {
            marks[i] = true;
        } else if (const auto j = into.indexOf(by.member(i))) {
            marks[*j] = true;
        }
    }
}

}  // namespace

std::size_t Committee::reputationLeaderIndex(std::uint64_t round,
                                             const std::vector<const codec::BlockHeader*>& recent,
                                             std::size_t window, const Committee* previous) const {
    const std::size_t base = leaderIndex(round);
    if (window == 0 || round % (window * members_.size()) == 0) {
        return base;  // off, or an open round: a member back from a crash can lead again
    }
    // Newest block first: `active` holds the members seen in the blocks walked so far, which are
    // all newer than the TC of the block at hand.
    std::vector<bool> active(members_.size(), false);
    std::vector<bool> silenced(members_.size(), false);
    std::size_t counted = 0;
    for (const codec::BlockHeader* header : recent) {
        if (counted == window) {
            break;
        }
        const Committee* signers = header->epoch == epoch_ ? this
                                   : previous != nullptr && header->epoch == previous->epoch()
                                       ? previous
                                       : nullptr;
        if (signers == nullptr || header->round == 0) {
            continue;
        }
        ++counted;
        if (const auto author = indexOf(header->author)) {
            active[*author] = true;  // it proposed after this block's TC
        }
        if (header->tc && header->tc->epoch == header->epoch) {
            // A member seen neither in this TC nor since is silenced: every live member times
            // out a round its leader let pass, and the first q timeouts make the TC.
            std::vector<bool> signedTc(members_.size(), false);
            markSigners(*signers, header->tc->signers, *this, signedTc);
            for (std::size_t i = 0; i < members_.size(); ++i) {
                silenced[i] = silenced[i] || (!active[i] && !signedTc[i]);
                active[i] = active[i] || signedTc[i];
            }
        }
        if (header->qc.epoch == header->epoch) {
            markSigners(*signers, header->qc.signers, *this, active);
        }
    }
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < active.size(); ++i) {
        if (active[i] && !silenced[i]) {
            candidates.push_back(i);
        }
    }
    // The rounds after the parent's: the first is led as the rule says, and each one that
    // passes without a block on this parent hands the lead to the next in line, so that one
    // member leads at most one round of a run of timeouts.
    const codec::BlockHeader* parent = recent.empty() ? nullptr : recent.front();
    const std::uint64_t first =
        (parent != nullptr && parent->epoch == epoch_ ? parent->round : 0) + 1;
    const std::uint64_t passed = round > first ? round - first : 0;
    const std::size_t firstBase = leaderIndex(first);
    // Fewer than q candidates is too little evidence (the first blocks of a chain): the line is
    // every member. q of them hold at least f + 1 honest members.
    if (candidates.size() < quorum()) {
        return static_cast<std::size_t>((firstBase + passed % members_.size()) % members_.size());
    }
    const auto at = std::find(candidates.begin(), candidates.end(), firstBase);
    const std::size_t start = at != candidates.end()
                                  ? static_cast<std::size_t>(at - candidates.begin())
                                  : static_cast<std::size_t>(first % candidates.size());
    return candidates[(start + passed % candidates.size()) % candidates.size()];
}

Result<std::vector<PubKey>> selectCommittee(const std::vector<PubKey>& validators,
                                            std::string_view chainId, std::uint64_t epoch,
                                            const Hash256& epochSeed, std::size_t committeeMax) {
    GL_TRY(checkDistinct(validators, "validator set"));
    if (committeeMax == 0) {
        return fail(ErrorCode::kInvalidArgument, "committee_max must be at least 1");
    }
    if (validators.size() <= committeeMax) {
        return validators;
    }
    // (sort key, position in the validator set); keys are distinct, so ties cannot occur.
    std::vector<std::pair<Hash256, std::size_t>> ranked;
    ranked.reserve(validators.size());
    for (std::size_t i = 0; i < validators.size(); ++i) {
        Bytes body;
        appendU64(body, epoch);
        append(body, epochSeed.view());
        append(body, validators[i].view());
        ranked.emplace_back(crypto::signingDigest(kCommitteeTag, chainId, body), i);
    }
    std::sort(ranked.begin(), ranked.end());
    ranked.resize(committeeMax);
    std::vector<std::size_t> chosen;
    chosen.reserve(committeeMax);
    for (const auto& entry : ranked) {
        chosen.push_back(entry.second);
    }
    std::sort(chosen.begin(), chosen.end());
    std::vector<PubKey> out;
    out.reserve(committeeMax);
    for (auto i : chosen) {
        out.push_back(validators[i]);
    }
    return out;
}

}  // namespace gridledger::consensus
