#include <set>

#include <gridledger/contracts/genesis.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

#include "genesis_json.h"

namespace gridledger::contracts {
namespace json = boost::json;

namespace detail {

Error badField(std::string_view field, std::string_view why) {
    return Error{ErrorCode::kConfig, "genesis." + std::string(field) + ": " + std::string(why)};
}

const json::value* optionalMember(const json::object& obj, std::string_view key) {
    return obj.if_contains(key);
}

Result<const json::value*> member(const json::object& obj, std::string_view key,
                                  std::string_view path) {
    const auto* value = obj.if_contains(key);
    if (value == nullptr) {
        return std::unexpected(badField(std::string(path) + std::string(key), "missing"));
    }
    return value;
}

Result<std::string> getString(const json::object& obj, std::string_view key,
                              std::string_view path) {
    GL_ASSIGN_OR_RETURN(value, member(obj, key, path));
    if (!value->is_string()) {
        return std::unexpected(badField(std::string(path) + std::string(key), "must be a string"));
    }
    return std::string(value->as_string());
}

Result<std::uint64_t> getU64(const json::object& obj, std::string_view key, std::string_view path) {
    GL_ASSIGN_OR_RETURN(text, getString(obj, key, path));
    auto value = parseU64(text);
    if (!value) {
        return std::unexpected(
            badField(std::string(path) + std::string(key), value.error().message));
    }
    return *value;
}

Result<u128> getU128(const json::object& obj, std::string_view key, std::string_view path) {
    GL_ASSIGN_OR_RETURN(text, getString(obj, key, path));
    auto value = parseU128(text);
    if (!value) {
        return std::unexpected(
            badField(std::string(path) + std::string(key), value.error().message));
    }
    return *value;
}

Result<std::uint32_t> getU32(const json::object& obj, std::string_view key, std::string_view path) {
    GL_ASSIGN_OR_RETURN(value, member(obj, key, path));
    if (!value->is_int64() || value->as_int64() < 0 || value->as_int64() > UINT32_MAX) {
        return std::unexpected(
            badField(std::string(path) + std::string(key), "must be a u32 number"));
    }
    return static_cast<std::uint32_t>(value->as_int64());
}

Result<const json::array*> getArray(const json::object& obj, std::string_view key,
                                    std::string_view path) {
    GL_ASSIGN_OR_RETURN(value, member(obj, key, path));
    if (!value->is_array()) {
        return std::unexpected(badField(std::string(path) + std::string(key), "must be an array"));
    }
    return &value->as_array();
}

Result<const json::object*> getObject(const json::object& obj, std::string_view key,
                                      std::string_view path) {
    GL_ASSIGN_OR_RETURN(value, member(obj, key, path));
    if (!value->is_object()) {
        return std::unexpected(badField(std::string(path) + std::string(key), "must be an object"));
    }
    return &value->as_object();
}

}  // namespace detail

namespace {

using detail::badField;
using detail::getArray;
using detail::getFixed;
using detail::getString;
using detail::getU32;
using detail::getU64;
using detail::member;

Error bad(std::string_view field, std::string_view why) {
    return badField(field, why);
}

Result<ConsensusParams> parseConsensus(const json::object& obj) {
    constexpr std::string_view kPath = "consensus.";
    ConsensusParams p;
    GL_ASSIGN_OR_RETURN(t0, getU64(obj, "round_timeout_ms", kPath));
    GL_ASSIGN_OR_RETURN(interval, getU64(obj, "empty_block_interval_ms", kPath));
    GL_ASSIGN_OR_RETURN(drift, getU64(obj, "max_clock_drift_ms", kPath));
    GL_ASSIGN_OR_RETURN(committeeMax, getU32(obj, "committee_max", kPath));
    GL_ASSIGN_OR_RETURN(maxTxs, getU32(obj, "max_block_txs", kPath));
    GL_ASSIGN_OR_RETURN(maxBytes, getU64(obj, "max_block_bytes", kPath));
    GL_ASSIGN_OR_RETURN(validity, getU64(obj, "max_validity_blocks", kPath));
    if (detail::optionalMember(obj, "block_time_ms") != nullptr) {
        GL_ASSIGN_OR_RETURN(blockTime, getU64(obj, "block_time_ms", kPath));
        p.blockTimeMs = blockTime;
    }
    if (detail::optionalMember(obj, "leader_reputation_window") != nullptr) {
        GL_ASSIGN_OR_RETURN(window, getU32(obj, "leader_reputation_window", kPath));
        if (window > kMaxLeaderReputationWindow) {
            return std::unexpected(bad("consensus.leader_reputation_window", "must be 0..10000"));
        }
        p.leaderReputationWindow = window;
    }
    if (t0 == 0 || interval == 0 || committeeMax == 0 || maxTxs == 0 || maxBytes == 0) {
        return std::unexpected(bad("consensus", "timeouts, intervals and limits must be positive"));
    }
    p.roundTimeoutMs = t0;
    p.emptyBlockIntervalMs = interval;
    p.maxClockDriftMs = drift;
    p.committeeMax = committeeMax;
    p.maxBlockTxs = maxTxs;
    p.maxBlockBytes = maxBytes;
    p.maxValidityBlocks = validity;
    return p;
}

Status parseValidators(const json::array& list, Genesis& out) {
    std::set<PubKey> keys;
    std::set<Address> accounts;
    for (const auto& item : list) {
        if (!item.is_object()) {
            return std::unexpected(bad("validators", "entries must be objects"));
        }
        const auto& obj = item.as_object();
        GenesisValidator v;
        GL_ASSIGN_OR_RETURN(name, getString(obj, "name", "validators[]."));
        GL_ASSIGN_OR_RETURN(key, getFixed<PubKey>(obj, "consensus_key", "validators[]."));
        GL_ASSIGN_OR_RETURN(node, getFixed<NodeId>(obj, "node_id", "validators[]."));
        v.name = name;
        v.consensusKey = key;
        v.nodeId = node;
        // A genesis from before validators had accounts of their own: the consensus key's.
        v.account = crypto::addressOf(key);
        if (obj.contains("account")) {
            GL_ASSIGN_OR_RETURN(account, getFixed<Address>(obj, "account", "validators[]."));
            v.account = account;
        }
        if (!keys.insert(key).second) {
            return std::unexpected(bad("validators", "duplicate consensus key"));
        }
        if (v.account.isZero() || !accounts.insert(v.account).second) {
            return std::unexpected(bad("validators", "zero or duplicate account"));
        }
        out.validators.push_back(v);
    }
    if (out.validators.empty()) {
        return std::unexpected(bad("validators", "at least one validator is required"));
    }
    return {};
}

Status parseAccounts(const json::array& list, Genesis& out) {
    for (const auto& item : list) {
        if (!item.is_object()) {
            return std::unexpected(bad("accounts", "entries must be objects"));
        }
        const auto& obj = item.as_object();
        GL_ASSIGN_OR_RETURN(address, getFixed<Address>(obj, "address", "accounts[]."));
        GL_ASSIGN_OR_RETURN(text, getString(obj, "balance", "accounts[]."));
        auto balance = parseU128(text);
        if (!balance) {
            return std::unexpected(bad("accounts[].balance", balance.error().message));
        }
        out.accounts.push_back(GenesisAccount{address, *balance});
    }
    return {};
}

}  // namespace

Result<Genesis> parseGenesis(std::string_view text) {
    boost::system::error_code ec;
    const json::value root = json::parse(text, ec);
    if (ec || !root.is_object()) {
        return fail(ErrorCode::kConfig, "genesis is not a JSON object");
    }
    const auto& obj = root.as_object();
    Genesis out;
    GL_ASSIGN_OR_RETURN(chainId, getString(obj, "chain_id"));
    if (chainId.empty() || chainId.size() > 64) {
        return std::unexpected(bad("chain_id", "must be 1 to 64 characters"));
    }
    out.chainId = chainId;
    GL_ASSIGN_OR_RETURN(time, getU64(obj, "genesis_time_ms"));
    out.genesisTimeMs = time;
    GL_ASSIGN_OR_RETURN(consensus, member(obj, "consensus", ""));
    if (!consensus->is_object()) {
        return std::unexpected(bad("consensus", "must be an object"));
    }
    GL_ASSIGN_OR_RETURN(params, parseConsensus(consensus->as_object()));
    out.consensus = params;
    GL_ASSIGN_OR_RETURN(validators, getArray(obj, "validators"));
    GL_TRY(parseValidators(*validators, out));
    GL_ASSIGN_OR_RETURN(accounts, getArray(obj, "accounts"));
    GL_TRY(parseAccounts(*accounts, out));
    GL_TRY(detail::parseContractSections(obj, out));
    return out;
}

ChainParams Genesis::chainParams() const {
    return ChainParams{genesisTimeMs, tokenomics, powerIndex, governance,
                       tasks,         fees,       stake,      reputation};
}

std::string genesisToJson(const Genesis& g) {
    json::object consensus;
    consensus["round_timeout_ms"] = std::to_string(g.consensus.roundTimeoutMs);
    consensus["empty_block_interval_ms"] = std::to_string(g.consensus.emptyBlockIntervalMs);
    consensus["max_clock_drift_ms"] = std::to_string(g.consensus.maxClockDriftMs);
    consensus["committee_max"] = g.consensus.committeeMax;
    consensus["max_block_txs"] = g.consensus.maxBlockTxs;
    consensus["max_block_bytes"] = std::to_string(g.consensus.maxBlockBytes);
    consensus["max_validity_blocks"] = std::to_string(g.consensus.maxValidityBlocks);
    consensus["block_time_ms"] = std::to_string(g.consensus.blockTimeMs);
    consensus["leader_reputation_window"] = g.consensus.leaderReputationWindow;
    json::array validators;
    for (const auto& v : g.validators) {
        validators.push_back(json::object{{"name", v.name},
                                          {"consensus_key", v.consensusKey.hex()},
                                          {"node_id", v.nodeId.hex()},
                                          {"account", v.account.hex()}});
    }
    json::array accounts;
    for (const auto& a : g.accounts) {
        accounts.push_back(
            json::object{{"address", a.address.hex()}, {"balance", toDecimal(a.balance)}});
    }
    json::object root;
    root["chain_id"] = g.chainId;
    root["genesis_time_ms"] = std::to_string(g.genesisTimeMs);
    root["consensus"] = std::move(consensus);
    root["validators"] = std::move(validators);
    root["accounts"] = std::move(accounts);
    detail::renderContractSections(g, root);
    return json::serialize(root);
}

Hash256 genesisHash(const Genesis& genesis) {
    return crypto::sha256(asBytes(genesisToJson(genesis)));
}

std::string signingDomainOf(const Genesis& genesis) {
    return crypto::chainDomain(genesis.chainId, genesisHash(genesis));
}

codec::Block genesisBlock(const Genesis& genesis, const Hash256& stateRoot) {
    codec::BlockHeader header;
    // The genesis block's parent is the genesis hash, so the chain's anchor commits to its chain
    // id, validators, balances and parameters.
    header.parentId = genesisHash(genesis);
    header.epoch = 1;
    header.timestampMs = genesis.genesisTimeMs;
    header.execStateRoot = stateRoot;
    header.execResultsRoot = codec::merkleRoot({});
    return codec::makeBlock(header, {});
}

codec::QuorumCert genesisQc(const codec::Block& genesisBlock) {
    codec::QuorumCert qc;
    qc.epoch = genesisBlock.header.epoch;
    qc.blockId = genesisBlock.id;
    return qc;
}

}  // namespace gridledger::contracts
