#include <algorithm>
#include <limits>
#include <queue>

#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/mempool.h>

namespace gridledger::ledger {

void PendingVerdicts::settle(std::vector<Status> verdicts) {
    {
        const std::lock_guard lock(mutex_);
        verdicts_ = std::move(verdicts);
        settled_ = true;
    }
    settledCv_.notify_all();
}

Status PendingVerdicts::wait(std::size_t index) const {
    std::unique_lock lock(mutex_);
    settledCv_.wait(lock, [this] { return settled_; });
    return verdicts_.at(index);
}

namespace {

VerifyPoolOptions poolOptions(const MempoolOptions& options) {
    VerifyPoolOptions out;
    out.threads = options.verifierThreads;
    out.maxQueue = options.verifyQueue;
    out.verifier = options.verifier;
    out.domain = options.signingDomain;
    return out;
}

Error badSignature() {
    return Error{ErrorCode::kBadSignature, "signature does not match the sender key"};
}

TxRules rulesOf(const MempoolOptions& options) {
    TxRules rules;
    rules.chainId = options.chainId;
    rules.maxTxBytes = options.maxTxBytes;
    rules.nextHeight =
        checkedAdd(options.committedHeight, 1).value_or(std::numeric_limits<std::uint64_t>::max());
    rules.maxValidityBlocks = options.maxValidityBlocks;
    return rules;
}

}  // namespace

Mempool::Mempool(MempoolOptions options, AccountReader accountReader)
    : options_(std::move(options)),
      accountReader_(std::move(accountReader)),
      rules_(rulesOf(options_)),
      pool_(poolOptions(options_)) {}

Mempool::~Mempool() {
    pool_.shutdown();
}

void Mempool::shutdown() {
    pool_.shutdown();
}

Result<Hash256> Mempool::submit(ByteView raw) {
    return counted(admit(raw));
}

std::vector<Result<Hash256>> Mempool::submitBatch(std::span<const ByteView> raws) {
    std::vector<Result<Decoded>> decoded;
    decoded.reserve(raws.size());
    for (const ByteView raw : raws) {
        decoded.push_back(decode(raw));
    }
    // One verification per (sender, nonce): a second transaction for a nonce of the batch is
    // refused as taken when its turn comes, before any verification, as submit() would.
    std::vector<codec::SignedTx> unjudged;
    // The verdicts on unjudged, which another admission of one of them meanwhile (the same
    // gossip from another peer) waits for instead of verifying it again.
    const auto verdicts = std::make_shared<PendingVerdicts>();
    std::set<std::pair<Address, std::uint64_t>> listed;
    {
        const std::lock_guard lock(mutex_);
        for (const auto& d : decoded) {
            if (d && !verdicts_.contains(d->tx->hash) && !verifying_.contains(d->tx->hash) &&
                checkAdmissibleLocked(*d->tx, d->account) &&
                listed.emplace(d->tx->sender, d->tx->body.nonce).second) {
                verifying_.emplace(d->tx->hash, PendingVerdict{verdicts, unjudged.size()});
                unjudged.push_back(*d->tx);
            }
        }
    }
    std::vector<bool> valid;
    if (!unjudged.empty()) {
        valid = pool_.verifyBatch(unjudged);
    }
    std::vector<Result<Hash256>> out;
    out.reserve(raws.size());
    {
        std::unique_lock lock(mutex_);
        if (!unjudged.empty()) {
            std::vector<Status> given;
            given.reserve(unjudged.size());
            for (std::size_t i = 0; i < unjudged.size(); ++i) {
                rememberVerdictLocked(unjudged[i].hash, valid[i]);
                verifying_.erase(unjudged[i].hash);
                given.push_back(valid[i] ? Status{} : Status{std::unexpected(badSignature())});
            }
            // Before the admissions below, so that whoever waits for one of them goes on as
            // soon as it can take the lock.
            verdicts->settle(std::move(given));
        }
        // Each is now admitted with its verdict known, in order (a sender's nonces in a row),
        // under this one hold of the lock; one that another admission is still verifying waits
        // for that verdict without it.
        for (auto& d : decoded) {
            if (!d) {
                out.push_back(counted(std::unexpected(d.error())));
                continue;
            }
            const Result<bool> admitted = admitIfJudgedLocked(lock, *d);
            if (admitted && !*admitted) {
                lock.unlock();
                out.push_back(counted(admitDecoded(std::move(*d))));
                lock.lock();
                continue;
            }
            out.push_back(counted(admitted ? Result<Hash256>(d->tx->hash)
                                           : std::unexpected(admitted.error())));
        }
    }
    return out;
}

Result<Hash256> Mempool::counted(Result<Hash256> result) {
    if (result) {
        counters_.admitted.fetch_add(1, std::memory_order_relaxed);
    } else {
        counters_.rejectedByCode[MempoolCounters::slotOf(result.error().code)].fetch_add(
            1, std::memory_order_relaxed);
    }
    return result;
}

Result<Mempool::Decoded> Mempool::decode(ByteView raw) const {
    const std::size_t maxTxBytes = std::min(options_.maxTxBytes, codec::kMaxTxBytes);
    if (raw.size() > maxTxBytes) {
        return fail(ErrorCode::kTxTooLarge, "transaction of " + std::to_string(raw.size()) +
                                                " bytes exceeds " + std::to_string(maxTxBytes));
    }
    GL_ASSIGN_OR_RETURN(tx, codec::decodeTx(raw));
    Decoded out{std::make_shared<const codec::SignedTx>(std::move(tx)), {}, 0};
    GL_ASSIGN_OR_RETURN(feeFloor, readFee(out.tx->body.payload));
    if (out.tx->body.fee < feeFloor) {
        return fail(ErrorCode::kFeeTooLow,
                    "fee " + std::to_string(out.tx->body.fee) + " is below " +
                        std::to_string(feeFloor) + " for " +
                        std::string(codec::payloadKind(out.tx->body.payload)));
    }
    // The account is read without the lock; a block committed meanwhile makes it stale.
    out.generation = commits_.load(std::memory_order_acquire);
    GL_ASSIGN_OR_RETURN(account, readAccount(out.tx->sender));
    out.account = account;
    return out;
}

Result<Hash256> Mempool::admit(ByteView raw) {
    GL_ASSIGN_OR_RETURN(decoded, decode(raw));
    return admitDecoded(std::move(decoded));
}

Result<std::vector<Hash256>> Mempool::admissibleLocked(std::unique_lock<std::mutex>& lock,
                                                       Decoded& decoded) {
    GL_TRY(refreshAccountLocked(lock, decoded.tx->sender, decoded.generation, decoded.account));
    GL_TRY(checkAdmissibleLocked(*decoded.tx, decoded.account));
    return planRoomLocked(*decoded.tx);
}

Result<bool> Mempool::admitIfJudgedLocked(std::unique_lock<std::mutex>& lock, Decoded& decoded) {
    // Cheap checks first, so that a doomed transaction costs no signature verification.
    GL_ASSIGN_OR_RETURN(victims, admissibleLocked(lock, decoded));
    const auto cached = verdicts_.find(decoded.tx->hash);
    if (cached == verdicts_.end()) {
        return false;
    }
    if (!cached->second) {
        return std::unexpected(badSignature());
    }
    evictLocked(victims);
    insertLocked(decoded.tx, decoded.account.nonce);
    return true;
}

Result<Hash256> Mempool::admitDecoded(Decoded decoded) {
    const TxPtr& tx = decoded.tx;
    std::shared_ptr<PendingVerdicts> own;  // set iff this call runs the verification
    PendingVerdict verdict;
    {
        std::unique_lock lock(mutex_);
        GL_ASSIGN_OR_RETURN(admitted, admitIfJudgedLocked(lock, decoded));
        if (admitted) {
            return tx->hash;
        }
        if (const auto running = verifying_.find(tx->hash); running != verifying_.end()) {
            verdict = running->second;
        } else {
            own = std::make_shared<PendingVerdicts>();
            verdict = PendingVerdict{own, 0};
            verifying_.emplace(tx->hash, verdict);
        }
    }
    if (own) {
        const Status queued =
            pool_.submit(tx, [own](Status status) { own->settle({std::move(status)}); });
        if (!queued) {
            own->settle({queued});
        }
    }
    const Status outcome = verdict.wait();

    std::unique_lock lock(mutex_);
    if (own) {
        verifying_.erase(tx->hash);
        if (outcome || outcome.error().code == ErrorCode::kBadSignature) {
            rememberVerdictLocked(tx->hash, outcome.has_value());
        }
    }
    if (!outcome) {
        return std::unexpected(outcome.error());
    }
    // The mempool may have changed while the signature was checked: decide again.
    GL_ASSIGN_OR_RETURN(victims, admissibleLocked(lock, decoded));
    evictLocked(victims);
    insertLocked(tx, decoded.account.nonce);
    return tx->hash;
}

Status Mempool::refreshAccountLocked(std::unique_lock<std::mutex>& lock, const Address& sender,
                                     std::uint64_t& generation, AccountView& account) const {
    while (generation != commits_.load(std::memory_order_acquire)) {
        generation = commits_.load(std::memory_order_acquire);
        lock.unlock();
        auto fresh = readAccount(sender);
        lock.lock();
        if (!fresh) {
            return std::unexpected(fresh.error());
        }
        account = *fresh;
    }
    return {};
}

Result<AccountView> Mempool::readAccount(const Address& sender) const {
    if (!accountReader_) {
        return fail(ErrorCode::kUnavailable, "mempool has no account reader");
    }
    try {
        return accountReader_(sender);
    } catch (...) {
        return fail(ErrorCode::kInternal, "account reader failed");
    }
}

Result<std::uint64_t> Mempool::readFee(const codec::Payload& payload) const {
    if (!options_.feeReader) {
        return 0;
    }
    try {
        return options_.feeReader(payload);
    } catch (...) {
        return fail(ErrorCode::kInternal, "fee reader failed");
    }
}

Status Mempool::checkAdmissibleLocked(const codec::SignedTx& tx, const AccountView& account) const {
    if (entries_.contains(tx.hash)) {
        return fail(ErrorCode::kDuplicateTx, "transaction " + tx.hash.hex() + " is pending");
    }
    GL_TRY(checkShape(tx, rules_));
    static const PendingNonces kNoneHeld;
    const auto queue = senders_.find(tx.sender);
    const bool held = queue != senders_.end();
    const std::uint64_t committed =
        held ? std::max(account.nonce, queue->second.committedNonce) : account.nonce;
    GL_TRY(checkNonce(tx.body.nonce, committed, held ? queue->second.nonces : kNoneHeld,
                      options_.nonceWindow));
    // Pending fees may include some of transactions that have committed since the balance was
    // read: the check errs on the side of refusing, and the sender may submit again.
    const u128 pending = held ? queue->second.pendingFees : 0;
    if (account.balance < pending || account.balance - pending < tx.body.fee) {
        return fail(ErrorCode::kInsufficientFee,
                    "balance " + toDecimal(account.balance) + " cannot pay fee " +
                        std::to_string(tx.body.fee) + " on top of pending fees " +
                        toDecimal(pending));
    }
    return {};
}

Result<std::vector<Hash256>> Mempool::planRoomLocked(const codec::SignedTx& tx) const {
    // Bounds the search for evictable transactions, so that admission stays cheap when most of
    // the cheapest ones are not a sender's last or sit in proposed blocks.
    constexpr std::size_t kMaxScan = 4096;
    std::size_t count = entries_.size();
    std::size_t bytes = bytes_;
    const auto fits = [&] {
        return count < options_.maxTxs && bytes <= options_.maxBytes &&
               tx.raw.size() <= options_.maxBytes - bytes;
    };
    std::vector<Hash256> victims;
    std::set<Address> touched{tx.sender};
    std::size_t scanned = 0;
    for (auto it = byFee_.begin(); !fits(); ++it, ++scanned) {
        if (it == byFee_.end() || std::get<0>(*it) >= tx.body.fee || scanned == kMaxScan ||
            victims.size() == options_.maxEvictionsPerAdmission) {
            return fail(ErrorCode::kMempoolFull,
                        "mempool is full (" + std::to_string(options_.maxTxs) + " txs, " +
                            std::to_string(options_.maxBytes) +
                            " bytes) of transactions paying at least fee " +
                            std::to_string(tx.body.fee));
        }
        const Entry& entry = entries_.at(std::get<2>(*it));
        const codec::SignedTx& held = *entry.tx;
        const auto& nonces = senders_.at(held.sender).nonces;
        if (entry.proposed || nonces.rbegin()->first != held.body.nonce ||
            !touched.insert(held.sender).second) {
            continue;
        }
        victims.push_back(held.hash);
        count -= 1;
        bytes -= held.raw.size();
    }
    return victims;
}

void Mempool::evictLocked(std::span<const Hash256> victims) {
    for (const Hash256& hash : victims) {
        removeLocked(hash);
    }
    counters_.evicted.fetch_add(victims.size(), std::memory_order_relaxed);
}

void Mempool::insertLocked(const TxPtr& tx, std::uint64_t accountNonce) {
    // Raising may drop stale transactions of the sender, and with the last one its queue.
    raiseCommittedNonceLocked(tx->sender, accountNonce);
    SenderQueue& queue = senders_[tx->sender];
    queue.committedNonce = std::max(queue.committedNonce, accountNonce);
    queue.nonces.emplace(tx->body.nonce, tx->hash);
    queue.pendingFees += tx->body.fee;
    const auto byFee = byFee_.emplace(tx->body.fee, ~nextArrival_, tx->hash).first;
    const auto byExpiry =
        byExpiry_.emplace(tx->body.validUntilHeight, nextArrival_, tx->hash).first;
    entries_.emplace(tx->hash, Entry{tx, nextArrival_++, false, holdAdmissions_, byFee, byExpiry});
    bytes_ += tx->raw.size();
}

void Mempool::removeLocked(const Hash256& hash) {
    if (const auto entry = entries_.find(hash); entry != entries_.end()) {
        removeLocked(entry);
    }
}

void Mempool::removeLocked(Entries::iterator entry) {
    const codec::SignedTx& tx = *entry->second.tx;
    if (const auto queue = senders_.find(tx.sender); queue != senders_.end()) {
        queue->second.nonces.erase(tx.body.nonce);
        queue->second.pendingFees -= tx.body.fee;
        if (queue->second.nonces.empty()) {
            senders_.erase(queue);
        }
    }
    byExpiry_.erase(entry->second.byExpiry);
    byFee_.erase(entry->second.byFee);
    bytes_ -= tx.raw.size();
    entries_.erase(entry);
}

void Mempool::raiseCommittedNonceLocked(const Address& sender, std::uint64_t accountNonce) {
    const auto queue = senders_.find(sender);
    if (queue == senders_.end() || accountNonce <= queue->second.committedNonce) {
        return;
    }
    queue->second.committedNonce = accountNonce;
    std::vector<Hash256> stale;
    const PendingNonces& nonces = queue->second.nonces;
    for (auto it = nonces.begin(); it != nonces.end() && it->first < accountNonce; ++it) {
        stale.push_back(it->second);
    }
    // Removing the last stale entry may erase the queue itself: `queue` is not used below.
    for (const Hash256& hash : stale) {
        removeLocked(hash);
    }
    counters_.stale.fetch_add(stale.size(), std::memory_order_relaxed);
}

void Mempool::evictExpiredLocked() {
    std::vector<Hash256> expired;
    for (auto it = byExpiry_.begin(); it != byExpiry_.end() && std::get<0>(*it) < rules_.nextHeight;
         ++it) {
        expired.push_back(std::get<2>(*it));
    }
    for (const Hash256& hash : expired) {
        removeLocked(hash);
    }
    counters_.expired.fetch_add(expired.size(), std::memory_order_relaxed);
}

void Mempool::rememberVerdictLocked(const Hash256& hash, bool valid) {
    const std::size_t capacity =
        options_.verdictCacheSize != 0 ? options_.verdictCacheSize : options_.maxTxs;
    if (capacity == 0 || !verdicts_.emplace(hash, valid).second) {
        return;
    }
    verdictOrder_.push_back(hash);
    while (verdictOrder_.size() > capacity) {
        verdicts_.erase(verdictOrder_.front());
        verdictOrder_.pop_front();
    }
}

std::vector<TxPtr> Mempool::collect(std::size_t maxTxs, std::size_t maxBytes) const {
    struct Head {
        std::uint64_t fee;
        std::uint64_t arrival;
        const SenderQueue* queue;
        std::uint64_t nonce;
        const Entry* entry;
        /** Served later: a lower fee, or the same fee and a later arrival. */
        bool operator>(const Head& other) const {
            return fee != other.fee ? fee < other.fee : arrival > other.arrival;
        }
    };
    const std::lock_guard lock(mutex_);
    // The first transaction at or after `nonce` in the sender's contiguous run that no proposed
    // block carries yet; proposed ones keep the run going but are not handed out again, and a
    // held one ends it.
    const auto nextOf = [this](const SenderQueue& queue,
                               std::uint64_t nonce) -> std::optional<Head> {
        for (auto it = queue.nonces.find(nonce); it != queue.nonces.end() && it->first == nonce;
             ++it, ++nonce) {
            const Entry& entry = entries_.at(it->second);
            if (entry.held) {
                break;  // held back until its batch is certified: the run stops here
            }
            if (!entry.proposed) {
                return Head{entry.tx->body.fee, entry.arrival, &queue, nonce, &entry};
            }
        }
        return std::nullopt;
    };

    std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
    for (const auto& [sender, queue] : senders_) {
        if (auto head = nextOf(queue, queue.committedNonce)) {
            heads.push(*head);
        }
    }
    std::vector<TxPtr> out;
    std::size_t used = 0;
    while (!heads.empty() && out.size() < maxTxs) {
        const Head head = heads.top();
        heads.pop();
        const std::size_t size = head.entry->tx->raw.size();
        if (size > maxBytes - used) {
            continue;  // a sender's run cannot skip a nonce: this sender is done
        }
        out.push_back(head.entry->tx);
        used += size;
        if (auto next = nextOf(*head.queue, head.nonce + 1)) {
            heads.push(*next);
        }
    }
    return out;
}

void Mempool::setProposed(std::span<const Hash256> hashes, bool proposed) {
    const std::lock_guard lock(mutex_);
    for (const Hash256& hash : hashes) {
        if (const auto entry = entries_.find(hash); entry != entries_.end()) {
            entry->second.proposed = proposed;
        }
    }
}

void Mempool::markProposed(std::span<const Hash256> hashes) {
    setProposed(hashes, true);
}

void Mempool::release(std::span<const Hash256> hashes) {
    setProposed(hashes, false);
}

void Mempool::releaseAll() {
    const std::lock_guard lock(mutex_);
    for (auto& [hash, entry] : entries_) {
        entry.proposed = false;
    }
}

void Mempool::holdAdmissions(bool on) {
    const std::lock_guard lock(mutex_);
    holdAdmissions_ = on;
    if (!on) {
        for (auto& [hash, entry] : entries_) {
            entry.held = false;
        }
    }
}

void Mempool::ready(std::span<const Hash256> hashes) {
    const std::lock_guard lock(mutex_);
    for (const Hash256& hash : hashes) {
        if (const auto entry = entries_.find(hash); entry != entries_.end()) {
            entry->second.held = false;
        }
    }
}

void Mempool::onCommitted(std::span<const Hash256> committedHashes, std::uint64_t height) {
    std::vector<Address> touched;
    {
        const std::lock_guard lock(mutex_);
        const std::uint64_t next =
            checkedAdd(height, 1).value_or(std::numeric_limits<std::uint64_t>::max());
        rules_.nextHeight = std::max(rules_.nextHeight, next);
        commits_.fetch_add(1, std::memory_order_acq_rel);
        std::uint64_t removed = 0;
        for (const Hash256& hash : committedHashes) {
            if (const auto entry = entries_.find(hash); entry != entries_.end()) {
                touched.push_back(entry->second.tx->sender);
                removeLocked(entry);
                ++removed;
            }
        }
        counters_.committed.fetch_add(removed, std::memory_order_relaxed);
        evictExpiredLocked();
        // Only senders that still hold transactions can have stale ones.
        std::erase_if(touched,
                      [this](const Address& sender) { return !senders_.contains(sender); });
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    // Read the new committed nonces without the lock, then apply them.
    std::vector<std::pair<Address, std::uint64_t>> nonces;
    nonces.reserve(touched.size());
    for (const Address& sender : touched) {
        if (auto account = readAccount(sender)) {
            nonces.emplace_back(sender, account->nonce);
        }
    }
    const std::lock_guard lock(mutex_);
    for (const auto& [sender, nonce] : nonces) {
        raiseCommittedNonceLocked(sender, nonce);
    }
}

bool Mempool::contains(const Hash256& hash) const {
    const std::lock_guard lock(mutex_);
    return entries_.contains(hash);
}

std::optional<PendingTx> Mempool::get(const Hash256& hash) const {
    const std::lock_guard lock(mutex_);
    const auto entry = entries_.find(hash);
    if (entry == entries_.end()) {
        return std::nullopt;
    }
    return PendingTx{entry->second.tx, entry->second.proposed, entry->second.arrival};
}

std::size_t Mempool::size() const {
    const std::lock_guard lock(mutex_);
    return entries_.size();
}

std::size_t Mempool::bytes() const {
    const std::lock_guard lock(mutex_);
    return bytes_;
}

KnownTx Mempool::known(const Hash256& hash) const {
    const std::lock_guard lock(mutex_);
    if (const auto held = entries_.find(hash); held != entries_.end()) {
        return KnownTx{true, held->second.tx};
    }
    const auto verdict = verdicts_.find(hash);
    return KnownTx{verdict != verdicts_.end() && verdict->second, nullptr};
}

Mempool::Unjudged Mempool::unjudged(std::span<const Bytes> txs) const {
    Unjudged out;
    const std::lock_guard lock(mutex_);
    for (const auto& raw : txs) {
        const Hash256 hash = crypto::sha256(raw);
        if (entries_.contains(hash) || verdicts_.contains(hash)) {
            continue;
        }
        if (const auto running = verifying_.find(hash); running != verifying_.end()) {
            out.awaited.emplace_back(hash, running->second);
            continue;
        }
        if (auto tx = codec::decodeTx(raw); tx) {
            out.txs.push_back(std::move(*tx));
        }
    }
    return out;
}

void Mempool::rememberVerdicts(std::span<const codec::SignedTx> unjudged,
                               const std::vector<bool>& valid,
                               std::span<const std::pair<Hash256, PendingVerdict>> awaited) {
    // The admission that verifies an awaited transaction remembers its verdict too, once it
    // takes the lock again: whichever comes first remembers it.
    std::vector<std::pair<Hash256, bool>> found;
    for (const auto& [hash, verdict] : awaited) {
        const Status status = verdict.wait();
        if (status || status.error().code == ErrorCode::kBadSignature) {
            found.emplace_back(hash, status.has_value());
        }
    }
    const std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < unjudged.size(); ++i) {
        rememberVerdictLocked(unjudged[i].hash, valid[i]);
    }
    for (const auto& [hash, isValid] : found) {
        rememberVerdictLocked(hash, isValid);
    }
}

std::size_t Mempool::verifyProposed(std::span<const Bytes> txs) {
    const Unjudged checked = unjudged(txs);
    rememberVerdicts(checked.txs, pool_.verifyBatch(checked.txs), checked.awaited);
    return checked.txs.size();
}

bool Mempool::signaturesValid(std::span<const Bytes> txs) {
    verifyProposed(txs);
    const std::lock_guard lock(mutex_);
    return std::ranges::all_of(txs, [&](const Bytes& raw) {
        const Hash256 hash = crypto::sha256(raw);
        if (entries_.contains(hash)) {
            return true;
        }
        const auto verdict = verdicts_.find(hash);
        return verdict != verdicts_.end() && verdict->second;
    });
}

void Mempool::acceptCertified(std::span<const Bytes> txs) {
    const std::lock_guard lock(mutex_);
    for (const auto& raw : txs) {
        rememberVerdictLocked(crypto::sha256(raw), true);
    }
}

Mempool::ProposedChecks Mempool::startVerifyingProposed(std::span<const Bytes> txs) {
    ProposedChecks checks;
    Unjudged checked = unjudged(txs);
    checks.txs_ = std::move(checked.txs);
    checks.awaited_ = std::move(checked.awaited);
    if (!checks.txs_.empty()) {
        checks.pending_ = pool_.startBatch(checks.txs_);
    }
    return checks;
}

std::size_t Mempool::finishVerifyingProposed(ProposedChecks checks) {
    rememberVerdicts(checks.txs_, pool_.finishBatch(std::move(checks.pending_)), checks.awaited_);
    return checks.txs_.size();
}

std::uint64_t Mempool::nextHeight() const {
    const std::lock_guard lock(mutex_);
    return rules_.nextHeight;
}

}  // namespace gridledger::ledger
