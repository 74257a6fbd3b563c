#include <chrono>
#include <iostream>
#include <thread>

#include <boost/json.hpp>

#include <gridledger/codec/tx.h>

#include "cli_options.h"

namespace gridledger::node {
namespace po = boost::program_options;
namespace json = boost::json;

namespace {

/** Default lifetime of a transaction built by the CLI, in blocks after the current head. */
constexpr std::uint64_t kDefaultValidity = 1000;

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

int runTransfer(const Args& args) {
    std::string homeFlag;
    std::string from;
    std::string to;
    std::string amount;
    std::string rpc;
    std::string nonceFlag;
    std::uint64_t validFor = kDefaultValidity;
    bool wait = false;
    po::options_description desc("gridledger tx transfer --from KEY --to ADDRESS --amount UNITS");
    desc.add_options()("from", po::value(&from)->required(), "name of the sender's key")(
        "to", po::value(&to)->required(), "recipient address (0x + 40 hex)")(
        "amount", po::value(&amount)->required(), "DPS base units (1 DPS = 10^18)")(
        "nonce", po::value(&nonceFlag), "sender nonce (default: the account's next nonce)")(
        "valid-for", po::value(&validFor), "blocks after the head the tx stays valid")(
        "rpc", po::value(&rpc), "node RPC endpoint host:port")(
        "wait", po::bool_switch(&wait), "wait until committed and print the receipt");
    int exitCode = 0;
    if (!parseOptions("tx transfer", desc, {}, args, homeFlag, exitCode)) {
        return exitCode;
    }
    const Home home = Home::resolve(homeFlag);
    auto key = home.loadKey(from);
    auto toAddress = Address::fromHex(to);
    auto units = parseU128(amount);
    auto endpoint = resolveEndpoint(rpc, home);
    for (const auto* error :
         {key ? nullptr : &key.error(), toAddress ? nullptr : &toAddress.error(),
          units ? nullptr : &units.error(), endpoint ? nullptr : &endpoint.error()}) {
        if (error != nullptr) {
            return reportError("tx transfer", *error);
        }
    }
    const std::string sender = crypto::addressOf(key->publicKey()).hex();
    auto head = callRpc(*endpoint, "chain_getHead", json::array{});
    auto status = head ? callRpc(*endpoint, "node_status", json::array{}) : head;
    auto account =
        status ? callRpc(*endpoint, "account_get", json::array{json::string(sender)}) : status;
    if (!account) {
        return reportError("tx transfer", account.error());
    }
    auto height = u64Field(*head, "height");
    auto nonce = nonceFlag.empty() ? u64Field(*account, "nonce") : parseU64(nonceFlag);
    const auto* chain = status->as_object().if_contains("chain_id");
    if (!height || !nonce || chain == nullptr || !chain->is_string()) {
        return reportError("tx transfer",
                           Error{ErrorCode::kMalformed, "unexpected answer from the node"});
    }
    codec::TxBody body{std::string(chain->as_string()), key->publicKey(), *nonce,
                       *height + validFor, codec::Transfer{*toAddress, *units}};
    const codec::SignedTx tx = codec::signTx(body, *key);
    auto submitted = callRpc(*endpoint, "tx_submit", json::array{json::string(toHex(tx.raw))});
    if (!submitted) {
        return reportError("tx transfer", submitted.error());
    }
    std::cout << json::serialize(*submitted) << "\n";
    if (wait) {
        auto committed = waitCommitted(*endpoint, tx.hash.hex(), std::chrono::seconds(60));
        if (!committed) {
            return reportError("tx transfer", committed.error());
        }
        std::cout << json::serialize(*committed) << "\n";
    }
    return 0;
}

}  // namespace

int runTx(const Args& args) {
    if (args.empty() || args[0] != "transfer") {
        std::cerr << "usage: gridledger tx transfer --from KEY --to ADDRESS --amount UNITS\n";
        return 2;
    }
    return runTransfer(Args(args.begin() + 1, args.end()));
}

}  // namespace gridledger::node
