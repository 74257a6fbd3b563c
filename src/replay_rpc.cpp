#include "replay_rpc.h"

#include <boost/json.hpp>

#include <gridledger/base/amount.h>
#include <gridledger/rpc/chain_methods.h>

namespace gridledger::node {
namespace json = boost::json;
namespace {

const json::value* member(const json::value& v, std::string_view key) {
    const auto* obj = v.if_object();
    return obj != nullptr ? obj->if_contains(key) : nullptr;
}

/** The hex string under `key` as bytes; std::nullopt when absent, an Error when malformed. */
Result<std::optional<Bytes>> hexMember(const json::value& v, std::string_view key) {
    const auto* found = member(v, key);
    if (found == nullptr) {
        return std::optional<Bytes>();
    }
    if (!found->is_string()) {
        return fail(ErrorCode::kMalformed, "the node's \"" + std::string(key) + "\" is not hex");
    }
    auto bytes = fromHex(found->as_string());
    if (!bytes) {
        return fail(ErrorCode::kMalformed, "the node's \"" + std::string(key) + "\" is not hex");
    }
    return std::optional<Bytes>(std::move(*bytes));
}

/** A decimal string member as a u64. */
Result<std::uint64_t> decimalMember(const json::value& v, std::string_view key) {
    const auto* found = member(v, key);
    std::optional<std::uint64_t> parsed;
    if (found != nullptr && found->is_string()) {
        if (auto number = parseU64(found->as_string())) {
            parsed = *number;
        }
    }
    if (!parsed) {
        return fail(ErrorCode::kMalformed,
                    "the node's \"" + std::string(key) + "\" is not a decimal height");
    }
    return *parsed;
}

/** Decodes one served entry that should be of `height`. */
Result<ReplayEntry> decodeEntry(const json::value& served, std::uint64_t height) {
    GL_ASSIGN_OR_RETURN(servedHeight, decimalMember(served, "height"));
    if (servedHeight != height) {
        return fail(ErrorCode::kMalformed,
                    "the node answered with height " + std::to_string(servedHeight));
    }
    ReplayEntry entry;
    GL_ASSIGN_OR_RETURN(block, hexMember(served, "block"));
    if (block) {
        auto decoded = codec::decodeBlock(*block);
        if (!decoded) {
            return fail(ErrorCode::kMalformed,
                        "the served block does not decode: " + decoded.error().message);
        }
        entry.block = std::move(*decoded);
    }
    GL_ASSIGN_OR_RETURN(cert, hexMember(served, "certificate"));
    if (cert) {
        auto decoded = codec::decodeQc(*cert);
        if (!decoded) {
            return fail(ErrorCode::kMalformed,
                        "the served certificate does not decode: " + decoded.error().message);
        }
        entry.cert = std::move(*decoded);
    }
    GL_ASSIGN_OR_RETURN(stateRoot, hexMember(served, "state_root"));
    GL_ASSIGN_OR_RETURN(resultsRoot, hexMember(served, "results_root"));
    if (stateRoot && resultsRoot) {
        auto state = Hash256::fromBytes(*stateRoot);
        auto results = Hash256::fromBytes(*resultsRoot);
        if (!state || !results) {
            return fail(ErrorCode::kMalformed, "the node's roots are not 32 bytes");
        }
        entry.roots = ledger::ExecRoots{*state, *results};
    }
    return entry;
}

/** Calls block_getRaw from `from` for at most `count` blocks. */
Result<json::value> fetchRaw(const Endpoint& endpoint, std::uint64_t from, std::uint64_t count) {
    return callRpc(endpoint, "block_getRaw",
                   json::object{{"from", std::to_string(from)}, {"count", count}});
}

/** Fetches and decodes the batch from `from` up to `last`. */
Result<std::vector<Result<ReplayEntry>>> fetchBatch(const Endpoint& endpoint, std::uint64_t from,
                                                    std::uint64_t last) {
    const std::uint64_t count = std::min<std::uint64_t>(rpc::kMaxRawBlocks, last - from + 1);
    GL_ASSIGN_OR_RETURN(answer, fetchRaw(endpoint, from, count));
    const auto* blocks = member(answer, "blocks");
    if (blocks == nullptr || !blocks->is_array() || blocks->as_array().empty() ||
        blocks->as_array().size() > count) {
        return fail(ErrorCode::kMalformed, "the node's block_getRaw answer has no blocks");
    }
    std::vector<Result<ReplayEntry>> entries;
    std::uint64_t height = from;
    for (const auto& served : blocks->as_array()) {
        entries.push_back(decodeEntry(served, height));
        ++height;
    }
    return entries;
}

}  // namespace

Result<std::unique_ptr<RpcReplaySource>> RpcReplaySource::open(
    const Endpoint& endpoint, const std::string& chainId, std::optional<std::uint64_t> lastHeight) {
    GL_ASSIGN_OR_RETURN(answer, fetchRaw(endpoint, 0, 1));
    const auto* served = member(answer, "chain_id");
    const std::string servedChain =
        served != nullptr && served->is_string() ? std::string(served->as_string()) : "";
    if (servedChain != chainId) {
        return fail(ErrorCode::kInvalidArgument,
                    "the node at " + endpoint.host + ":" + std::to_string(endpoint.port) +
                        " serves chain \"" + servedChain + "\", the genesis file is for chain \"" +
                        chainId + "\"");
    }
    GL_ASSIGN_OR_RETURN(head, decimalMember(answer, "executed_height"));
    const std::uint64_t last = std::min(head, lastHeight.value_or(head));
    return std::unique_ptr<RpcReplaySource>(new RpcReplaySource(endpoint, head, last));
}

RpcReplaySource::RpcReplaySource(Endpoint endpoint, std::uint64_t head, std::uint64_t last)
    : endpoint_(std::move(endpoint)), head_(head), last_(last) {}

RpcReplaySource::~RpcReplaySource() {
    if (next_) {
        next_->wait();  // the batch in flight holds no reference to this source
    }
}

Result<std::uint64_t> RpcReplaySource::executedHeight() {
    return head_;
}

void RpcReplaySource::prefetch(std::uint64_t from) {
    next_.reset();
    if (from > last_) {
        return;
    }
    next_ = std::async(std::launch::async, [endpoint = endpoint_, from, last = last_] {
        return Batch{from, fetchBatch(endpoint, from, last)};
    });
}

Result<ReplayEntry> RpcReplaySource::entryAt(std::uint64_t height) {
    if (height > last_) {
        return fail(ErrorCode::kInvalidArgument,
                    "above the last height asked, " + std::to_string(last_));
    }
    const bool held = current_ && current_->entries && height >= current_->from &&
                      height - current_->from < current_->entries->size();
    if (!held) {
        // Heights are asked in order: the batch in flight starts where the current one ended.
        std::optional<Batch> arrived;
        if (next_) {
            arrived = next_->get();
            next_.reset();
        }
        if (!arrived || arrived->from != height) {
            arrived = Batch{height, fetchBatch(endpoint_, height, last_)};
        }
        current_ = std::move(arrived);
        if (!current_->entries) {
            return std::unexpected(current_->entries.error());
        }
        prefetch(height + current_->entries->size());
    }
    return std::move((*current_->entries)[height - current_->from]);
}

}  // namespace gridledger::node
