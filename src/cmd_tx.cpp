#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <thread>

#include <boost/json.hpp>

#include <gridledger/codec/tx.h>
#include <gridledger/contracts/genesis.h>

#include "cli_options.h"
#include "cmd_tx_support.h"

namespace gridledger::node {
namespace po = boost::program_options;
namespace json = boost::json;

namespace {

constexpr const char* kUsage = R"(usage: gridledger tx <payload> --from KEY [options]

payloads:
  transfer            --to ADDRESS --amount UNITS           move DPS (GFL cannot be transferred)
  propose <action>    a governance proposal (validators only); actions:
                        add-validator --name N --consensus-key 0x.. --node-id 0x.. --account 0x..
                        remove-validator --consensus-key 0x..
                        admit-provider | suspend-provider | reinstate-provider --provider 0x..
                        grant-verifier | revoke-verifier --account 0x..
                        set-parameter --parameter NAME --value V
  vote                --proposal ID [--reject]              a validator's vote
  register-provider   --inventory FILE.json                 register as a provider (locks the
                                                            chain's provider bond)
  provider-unbond                                           ask for the provider bond back
  attest              --category C --device MODEL=COUNT...  a PoCP attestation (default: the
                      [--epoch E --slot S]                  head block's epoch and slot)
  challenge           --provider 0x.. --epoch E --slot S    a verifier's challenge
{tasks}

common options: --from KEY (name of a key in the home) --nonce N --valid-for BLOCKS --rpc HOST:PORT
--wait (print the receipt once committed) --home DIR --passphrase-file FILE (an encrypted --from key;
else $GRIDLEDGER_KEY_PASSPHRASE, else a prompt); every payload takes --help.
)";

using Common = TxCommon;
using Build = TxBuild;

void addCommon(po::options_description& desc, Common& c) {
    desc.add_options()("from", po::value(&c.from)->required(), "name of the sender's key")(
        "nonce", po::value(&c.nonce), "sender nonce (default: the account's next nonce)")(
        "fee", po::value(&c.fee),
        "fee in DPS base units (default: the payload kind's fee in the home's genesis)")(
        "valid-for", po::value(&c.validFor), "blocks after the head the tx stays valid")(
        "rpc", po::value(&c.rpc), "node RPC endpoint host:port")(
        "rpc-token-file", po::value(&c.rpcTokenFile), "file holding the node's RPC bearer token")(
        "wait", po::bool_switch(&c.wait), "wait until committed and print the receipt");
    addPassphraseOption(desc, c.passphraseFile);
}

Result<std::uint64_t> u64Field(const json::value& value, std::string_view key) {
    const auto* obj = value.if_object();
    const auto* field = obj != nullptr ? obj->if_contains(key) : nullptr;
    if (field == nullptr || !field->is_string()) {
        return fail(ErrorCode::kMalformed, "node response lacks '" + std::string(key) + "'");
    }
    return parseU64(field->as_string());
}

/** Polls tx_get until the transaction is committed or `timeout` passes. */
Result<json::value> waitCommitted(const Endpoint& endpoint, const std::string& hash,
                                  std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        GL_ASSIGN_OR_RETURN(tx, callRpc(endpoint, "tx_get", json::array{json::string(hash)}));
        const auto* status = tx.as_object().if_contains("status");
        if (status != nullptr && *status == "committed") {
            return tx;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            return fail(ErrorCode::kUnavailable, "transaction not committed within the timeout");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

/** Signs the payload from `--from`, submits it and prints the answers. */
Status signAndSubmit(const Common& c, const Build& build) {
    const Home home = Home::resolve(c.homeFlag);
    // The chain is the one of the local home: a node that serves another chain is refused, never
    // followed, so a wrong --rpc cannot make this key sign for a chain it did not mean.
    GL_ASSIGN_OR_RETURN(genesisText, readFile(home.genesisFile()));
    GL_ASSIGN_OR_RETURN(genesis, contracts::parseGenesis(genesisText));
    auto passphrase = cliPassphrase(c.passphraseFile);
    GL_ASSIGN_OR_RETURN(key, home.loadKey(c.from, passphrase));
    // The consensus key signs proposals, votes and timeouts only; were it to sign transactions
    // too, one leaked key would be both. A validator's transactions come from its account key.
    if (auto consensus = home.keyPublicKey(std::string(kConsensusKeyName));
        consensus && *consensus == key.publicKey()) {
        return fail(ErrorCode::kInvalidArgument,
                    "'" + c.from + "' is this home's consensus key, which signs no transactions; " +
                        "use the validator's account key ('" + std::string(kAccountKeyName) + "')");
    }
    GL_ASSIGN_OR_RETURN(endpoint, resolveEndpoint(c.rpc, home, c.rpcTokenFile));
    const std::string sender = crypto::addressOf(key.publicKey()).hex();
    GL_ASSIGN_OR_RETURN(head, callRpc(endpoint, "chain_getHead", json::array{}));
    GL_ASSIGN_OR_RETURN(status, callRpc(endpoint, "node_getStatus", json::array{}));
    GL_ASSIGN_OR_RETURN(account,
                        callRpc(endpoint, "account_get", json::array{json::string(sender)}));
    GL_ASSIGN_OR_RETURN(height, u64Field(head, "height"));
    GL_ASSIGN_OR_RETURN(nonce, c.nonce.empty() ? u64Field(account, "nonce") : parseU64(c.nonce));
    const auto* chain = status.as_object().if_contains("chain_id");
    if (chain == nullptr || !chain->is_string()) {
        return fail(ErrorCode::kMalformed, "unexpected answer from the node");
    }
    if (chain->as_string() != genesis.chainId) {
        return fail(ErrorCode::kWrongChainId,
                    "the node at " + endpoint.host + ":" + std::to_string(endpoint.port) +
                        " serves chain '" + std::string(chain->as_string()) +
                        "', the home's genesis is chain '" + genesis.chainId + "'");
    }
    const auto* served = status.as_object().if_contains("genesis_hash");
    const std::string ours = contracts::genesisHash(genesis).hex();
    if (served == nullptr || !served->is_string() || served->as_string() != ours) {
        return fail(ErrorCode::kWrongChainId,
                    "the node at " + endpoint.host + ":" + std::to_string(endpoint.port) +
                        " serves another genesis of chain '" + genesis.chainId +
                        "' than the home's (" + ours + ")");
    }
    GL_ASSIGN_OR_RETURN(payload, build(endpoint));
    GL_ASSIGN_OR_RETURN(
        fee, c.fee.empty() ? Result<std::uint64_t>(genesis.fees.of(payload)) : parseU64(c.fee));
    codec::TxBody body{genesis.chainId,     key.publicKey(),    nonce,
                       height + c.validFor, std::move(payload), fee};
    const codec::SignedTx tx = codec::signTx(body, key, contracts::signingDomainOf(genesis));
    GL_ASSIGN_OR_RETURN(submitted,
                        callRpc(endpoint, "tx_submit", json::array{json::string(toHex(tx.raw))}));
    std::cout << json::serialize(submitted) << "\n";
    if (c.wait) {
        GL_ASSIGN_OR_RETURN(committed,
                            waitCommitted(endpoint, tx.hash.hex(), std::chrono::seconds(60)));
        std::cout << json::serialize(committed) << "\n";
    }
    return {};
}

}  // namespace

TxBuild fixedPayload(codec::Payload payload) {
    return [payload = std::move(payload)](const Endpoint&) -> Result<codec::Payload> {
        return payload;
    };
}

int runTxPayload(const std::string& name, po::options_description& specific, const Args& args,
                 Common& common, const std::function<Result<Build>()>& prepare) {
    po::options_description desc("gridledger tx " + name);
    desc.add(specific);
    addCommon(desc, common);
    int exitCode = 0;
    if (!parseOptions("tx " + name, desc, {}, args, common.homeFlag, exitCode)) {
        return exitCode;
    }
    auto build = prepare();
    auto done = build ? signAndSubmit(common, *build) : Status(std::unexpected(build.error()));
    return done ? 0 : reportError("tx " + name, done.error());
}

namespace {

int runPayload(const std::string& name, po::options_description& specific, const Args& args,
               Common& common, const std::function<Result<Build>()>& prepare) {
    return runTxPayload(name, specific, args, common, prepare);
}

Result<std::string> readFile(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return fail(ErrorCode::kIo, "cannot read " + path);
    }
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

int runTransfer(const Args& args) {
    Common c;
    std::string to;
    std::string amount;
    po::options_description o("transfer");
    o.add_options()("to", po::value(&to)->required(), "recipient address (0x + 40 hex)")(
        "amount", po::value(&amount)->required(), "DPS base units (1 DPS = 10^18)");
    return runPayload("transfer", o, args, c, [&]() -> Result<Build> {
        GL_ASSIGN_OR_RETURN(address, fixedArg<Address>(to, "to"));
        GL_ASSIGN_OR_RETURN(units, parseU128(amount));
        return fixedPayload(codec::Transfer{address, units});
    });
}

/** The proposal action named `action` from the parsed values. */
Result<codec::ProposalAction> proposalAction(const std::string& action,
                                             const std::map<std::string, std::string>& v) {
    const auto get = [&v](const std::string& key) -> Result<std::string> {
        const auto it = v.find(key);
        if (it == v.end() || it->second.empty()) {
            return fail(ErrorCode::kInvalidArgument, "--" + key + " is required");
        }
        return it->second;
    };
    if (action == "add-validator") {
        GL_ASSIGN_OR_RETURN(name, get("name"));
        GL_ASSIGN_OR_RETURN(keyText, get("consensus-key"));
        GL_ASSIGN_OR_RETURN(nodeText, get("node-id"));
        GL_ASSIGN_OR_RETURN(key, fixedArg<PubKey>(keyText, "consensus-key"));
        GL_ASSIGN_OR_RETURN(node, fixedArg<NodeId>(nodeText, "node-id"));
        GL_ASSIGN_OR_RETURN(accountText, get("account"));
        GL_ASSIGN_OR_RETURN(account, fixedArg<Address>(accountText, "account"));
        return codec::AddValidator{name, key, node, account};
    }
    if (action == "remove-validator") {
        GL_ASSIGN_OR_RETURN(keyText, get("consensus-key"));
        GL_ASSIGN_OR_RETURN(key, fixedArg<PubKey>(keyText, "consensus-key"));
        return codec::RemoveValidator{key};
    }
    if (action == "set-parameter") {
        GL_ASSIGN_OR_RETURN(name, get("parameter"));
        GL_ASSIGN_OR_RETURN(value, get("value"));
        return codec::SetParameter{name, value};
    }
    const bool onProvider = action == "admit-provider" || action == "suspend-provider" ||
                            action == "reinstate-provider";
    if (onProvider) {
        GL_ASSIGN_OR_RETURN(text, get("provider"));
        GL_ASSIGN_OR_RETURN(who, fixedArg<Address>(text, "provider"));
        if (action == "admit-provider") {
            return codec::AdmitProvider{who};
        }
        if (action == "suspend-provider") {
            return codec::SuspendProvider{who};
        }
        return codec::ReinstateProvider{who};
    }
    if (action == "grant-verifier" || action == "revoke-verifier") {
        GL_ASSIGN_OR_RETURN(text, get("account"));
        GL_ASSIGN_OR_RETURN(who, fixedArg<Address>(text, "account"));
        if (action == "grant-verifier") {
            return codec::GrantVerifier{who};
        }
        return codec::RevokeVerifier{who};
    }
    return fail(ErrorCode::kInvalidArgument, "unknown proposal action '" + action + "'");
}

int runPropose(const Args& args) {
    if (args.empty() || args[0].starts_with("-")) {
        std::cerr << kUsage;
        return 2;
    }
    const std::string& action = args[0];
    Common c;
    std::map<std::string, std::string> v;
    po::options_description o("propose " + action);
    for (const char* key :
         {"name", "consensus-key", "node-id", "provider", "account", "parameter", "value"}) {
        o.add_options()(key, po::value(&v[key]), key);
    }
    return runPayload("propose " + action, o, Args(args.begin() + 1, args.end()), c,
                      [&]() -> Result<Build> {
                          GL_ASSIGN_OR_RETURN(parsed, proposalAction(action, v));
                          return fixedPayload(codec::Propose{parsed});
                      });
}

int runVote(const Args& args) {
    Common c;
    std::uint64_t proposal = 0;
    bool reject = false;
    po::options_description o("vote");
    o.add_options()("proposal", po::value(&proposal)->required(), "proposal id")(
        "reject", po::bool_switch(&reject), "vote no (default: yes)");
    return runPayload("vote", o, args, c, [&]() -> Result<Build> {
        return fixedPayload(codec::ProposalVote{proposal, !reject});
    });
}

int runRegisterProvider(const Args& args) {
    Common c;
    std::string file;
    po::options_description o("register-provider");
    o.add_options()("inventory", po::value(&file)->required(),
                    "JSON file: {devices: [...], labels: [...], categories: [...]} "
                    "(docs/tokenomics.md)");
    return runPayload("register-provider", o, args, c, [&]() -> Result<Build> {
        GL_ASSIGN_OR_RETURN(text, readFile(file));
        GL_ASSIGN_OR_RETURN(inventory, contracts::parseInventoryJson(text));
        return fixedPayload(inventory);
    });
}

int runProviderUnbond(const Args& args) {
    Common c;
    po::options_description o("provider-unbond");
    return runPayload("provider-unbond", o, args, c,
                      []() -> Result<Build> { return fixedPayload(codec::ProviderUnbond{}); });
}

/** The epoch and slot of the node's head block, from tokenomics_get and chain_getHead. */
Result<std::pair<std::uint64_t, std::uint64_t>> headSlot(const Endpoint& endpoint) {
    GL_ASSIGN_OR_RETURN(t, callRpc(endpoint, "tokenomics_get", json::array{}));
    GL_ASSIGN_OR_RETURN(head, callRpc(endpoint, "chain_getHead", json::array{}));
    GL_ASSIGN_OR_RETURN(genesis, u64Field(t, "genesis_time_ms"));
    GL_ASSIGN_OR_RETURN(epochMs, u64Field(t.at("tokenomics"), "epoch_ms"));
    GL_ASSIGN_OR_RETURN(slotMs, u64Field(t.at("tokenomics"), "slot_ms"));
    GL_ASSIGN_OR_RETURN(now, u64Field(head.at("header"), "timestamp_ms"));
    if (now < genesis || epochMs == 0 || slotMs == 0) {
        return fail(ErrorCode::kMalformed, "the node's head is before genesis");
    }
    return std::pair{(now - genesis) / epochMs, ((now - genesis) % epochMs) / slotMs};
}

int runAttest(const Args& args) {
    Common c;
    codec::Attest a;
    std::vector<std::string> devices;
    std::vector<std::string> evidence;
    std::string epoch;
    std::string slot;
    po::options_description o("attest");
    o.add_options()("category", po::value(&a.category)->required(), "workload category")(
        "device", po::value(&devices)->multitoken()->required(),
        "MODEL=COUNT of an inventory model (repeatable)")("epoch", po::value(&epoch),
                                                          "epoch (default: the head block's)")(
        "slot", po::value(&slot), "slot within the epoch (default: the head block's)")(
        "power-watts", po::value(&a.powerWatts), "energy data: power draw in W")(
        "renewable-bps", po::value(&a.renewableShareBps), "energy data: renewable share, bps")(
        "evidence", po::value(&evidence)->multitoken(), "0x hash of a benchmark or task");
    return runPayload("attest", o, args, c, [&]() -> Result<Build> {
        for (const auto& d : devices) {
            const auto eq = d.rfind('=');
            auto count = eq == std::string::npos ? parseU64("") : parseU64(d.substr(eq + 1));
            if (!count) {
                return fail(ErrorCode::kInvalidArgument, "--device wants MODEL=COUNT: " + d);
            }
            a.devices.push_back(codec::DeviceCount{d.substr(0, eq), *count});
        }
        for (const auto& e : evidence) {
            GL_ASSIGN_OR_RETURN(hash, fixedArg<Hash256>(e, "evidence"));
            a.evidence.push_back(hash);
        }
        return Build([&](const Endpoint& endpoint) -> Result<codec::Payload> {
            if (epoch.empty() || slot.empty()) {
                GL_ASSIGN_OR_RETURN(current, headSlot(endpoint));
                a.epoch = current.first;
                a.slot = current.second;
            }
            if (!epoch.empty()) {
                GL_ASSIGN_OR_RETURN(e, parseU64(epoch));
                a.epoch = e;
            }
            if (!slot.empty()) {
                GL_ASSIGN_OR_RETURN(s, parseU64(slot));
                a.slot = s;
            }
            return a;
        });
    });
}

int runChallenge(const Args& args) {
    Common c;
    std::string provider;
    std::string evidence;
    codec::Challenge ch;
    po::options_description o("challenge");
    o.add_options()("provider", po::value(&provider)->required(), "the attesting provider")(
        "epoch", po::value(&ch.epoch)->required(), "the attestation's epoch")(
        "slot", po::value(&ch.slot)->required(), "the attestation's slot")(
        "reason", po::value(&ch.reason), "why the attestation is wrong")(
        "evidence", po::value(&evidence), "0x hash of the evidence");
    return runPayload("challenge", o, args, c, [&]() -> Result<Build> {
        GL_ASSIGN_OR_RETURN(who, fixedArg<Address>(provider, "provider"));
        ch.provider = who;
        GL_ASSIGN_OR_RETURN(hash, optionalHashArg(evidence, "evidence"));
        ch.evidence = hash;
        return fixedPayload(ch);
    });
}

}  // namespace

int runTx(const Args& args) {
    using Run = int (*)(const Args&);
    const std::pair<const char*, Run> payloads[] = {
        {"transfer", runTransfer},
        {"propose", runPropose},
        {"vote", runVote},
        {"register-provider", runRegisterProvider},
        {"attest", runAttest},
        {"challenge", runChallenge},
        {"provider-unbond", runProviderUnbond},
    };
    for (const auto& [name, run] : payloads) {
        if (!args.empty() && args[0] == name) {
            return run(Args(args.begin() + 1, args.end()));
        }
    }
    if (!args.empty()) {
        const int done = runTaskTx(args[0], Args(args.begin() + 1, args.end()));
        if (done >= 0) {
            return done;
        }
    }
    std::string usage(kUsage);
    usage.replace(usage.find("{tasks}"), std::string_view("{tasks}").size(), kTaskTxUsage);
    std::cerr << usage;
    return 2;
}

}  // namespace gridledger::node
