#pragma once

// Private to src/: what every `gridledger tx <payload>` command shares (cmd_tx.cpp), for the
// payload commands kept in their own files (cmd_tx_task.cpp).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <boost/program_options.hpp>

#include <gridledger/codec/payloads.h>

#include "cli_options.h"

namespace gridledger::node {

/** Options every payload takes. */
struct TxCommon {
    std::string homeFlag;
    std::string from;
    std::string rpc;
    /** A file holding the node's RPC bearer token (--rpc-token-file). */
    std::string rpcTokenFile;
    std::string nonce;
    /** DPS base units; empty means the payload kind's fee in the home's genesis. */
    std::string fee;
    /** The passphrase of an encrypted --from key (else $GRIDLEDGER_KEY_PASSPHRASE, a prompt). */
    std::string passphraseFile;
    /** Blocks after the head the transaction stays valid. */
    std::uint64_t validFor = 1000;
    bool wait = false;
};

/** Builds a payload once the node is known (some payloads read the chain first). */
using TxBuild = std::function<Result<codec::Payload>(const Endpoint&)>;

/** A TxBuild for a payload that needs nothing from the node. */
[[nodiscard]] TxBuild fixedPayload(codec::Payload payload);

/**
 * Parses the options of `tx <name>` (`specific` plus the common ones), then signs the payload
 * `prepare` builds from `--from`, submits it with tx_submit and prints the answers (and the
 * receipt with --wait). Returns the process exit code: 0, 1 on an error, 2 on a usage error.
 */
int runTxPayload(const std::string& name, boost::program_options::options_description& specific,
                 const Args& args, TxCommon& common,
                 const std::function<Result<TxBuild>()>& prepare);

/** A fixed-size value (address, hash) from 0x-hex text; kInvalidArgument naming `--what`. */
template <typename Fixed>
Result<Fixed> fixedArg(const std::string& text, std::string_view what) {
    auto value = Fixed::fromHex(text);
    if (!value) {
        return fail(ErrorCode::kInvalidArgument,
                    "--" + std::string(what) + ": " + value.error().message);
    }
    return *value;
}

/** An optional hash option (an evidence, a spec, an upheld result): zero when not given. */
inline Result<Hash256> optionalHashArg(const std::string& text, std::string_view what) {
    if (text.empty()) {
        return Hash256{};
    }
    return fixedArg<Hash256>(text, what);
}

/** `gridledger tx task-*`: runs the task command `name` ("task-create", …); -1 if unknown. */
int runTaskTx(const std::string& name, const Args& args);

/** The usage lines of the task commands, for `gridledger tx` without a payload. */
extern const char* const kTaskTxUsage;

}  // namespace gridledger::node
