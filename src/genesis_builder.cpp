#include "genesis_builder.h"

#include <chrono>

#include <boost/json.hpp>

#include "embedded_genesis.h"

namespace gridledger::node {
namespace json = boost::json;

Result<contracts::GenesisValidator> createValidatorKeys(const Home& home, const std::string& name,
                                                        const KeyProtection& protection) {
    if (std::filesystem::exists(home.keyFile("node"))) {
        return fail(ErrorCode::kInvalidArgument, home.keyFile("node").string() + " already exists");
    }
    if (std::filesystem::exists(home.keyFile(std::string(kAccountKeyName)))) {
        return fail(ErrorCode::kInvalidArgument,
                    home.keyFile(std::string(kAccountKeyName)).string() + " already exists");
    }
    GL_ASSIGN_OR_RETURN(validator, home.createKey(std::string(kConsensusKeyName), protection));
    GL_ASSIGN_OR_RETURN(account, home.createKey(std::string(kAccountKeyName), protection));
    GL_ASSIGN_OR_RETURN(node, home.createNodeKey(protection));
    return contracts::GenesisValidator{name, validator.publicKey(), node.nodeId(),
                                       crypto::addressOf(account.publicKey())};
}

Result<std::string> buildDevGenesis(const std::vector<contracts::GenesisValidator>& validators,
                                    const Address& dev, const DevGenesisOptions& options) {
    auto parsed = json::parse(devGenesisTemplate());
    auto& root = parsed.as_object();
    if (!options.chainId.empty()) {
        root["chain_id"] = options.chainId;
    }
    auto& consensus = root["consensus"].as_object();
    if (options.roundTimeoutMs) {
        consensus["round_timeout_ms"] = std::to_string(*options.roundTimeoutMs);
    }
    if (options.emptyBlockIntervalMs) {
        consensus["empty_block_interval_ms"] = std::to_string(*options.emptyBlockIntervalMs);
    }
    if (options.leaderReputationWindow) {
        consensus["leader_reputation_window"] = *options.leaderReputationWindow;
    }
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    root["genesis_time_ms"] = std::to_string(now.count());
    json::array entries;
    json::array accounts{json::object{{"address", dev.hex()}, {"balance", toDecimal(kDevBalance)}}};
    for (const auto& v : validators) {
        entries.push_back(json::object{{"name", v.name},
                                       {"consensus_key", v.consensusKey.hex()},
                                       {"node_id", v.nodeId.hex()},
                                       {"account", v.account.hex()}});
        accounts.push_back(
            json::object{{"address", v.account.hex()}, {"balance", toDecimal(kValidatorBalance)}});
    }
    root["validators"] = std::move(entries);
    root["accounts"] = std::move(accounts);
    // Round-trip through the parser so that no command writes a genesis the node would refuse.
    GL_ASSIGN_OR_RETURN(genesis, contracts::parseGenesis(json::serialize(parsed)));
    if (genesis.consensus.emptyBlockIntervalMs >= genesis.consensus.roundTimeoutMs) {
        return fail(ErrorCode::kInvalidArgument,
                    "the empty-block interval (" +
                        std::to_string(genesis.consensus.emptyBlockIntervalMs) +
                        " ms) must be below the round timeout (" +
                        std::to_string(genesis.consensus.roundTimeoutMs) + " ms)");
    }
    return contracts::genesisToJson(genesis);
}

Status writeGenesis(const Home& home, std::string_view genesis) {
    namespace fs = std::filesystem;
    return writeFile(home.genesisFile(), genesis,
                     fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                         fs::perms::others_read);
}

}  // namespace gridledger::node
