#pragma once

// Shared option parsing for the subcommands.

#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

#include <boost/program_options.hpp>

#include "commands.h"
#include "home.h"
#include "rpc_client.h"

namespace gridledger::node {

/**
 * Parses `args` against `desc` (which gets --help and --home added). Returns std::nullopt with
 * `exitCode` set when the command should stop (help shown or a usage error printed).
 */
std::optional<boost::program_options::variables_map> parseOptions(
    const std::string& command, boost::program_options::options_description& desc,
    const boost::program_options::positional_options_description& positional, const Args& args,
    std::string& homeFlag, int& exitCode);

/**
 * The RPC endpoint: --rpc if given, else the home's config, else 127.0.0.1:8545. Its bearer
 * token: from `tokenFileFlag` (--rpc-token-file) or $GRIDLEDGER_RPC_TOKEN_FILE when given, else,
 * for the home's own node, from its rpc.auth_token_file.
 */
Result<Endpoint> resolveEndpoint(const std::string& rpcFlag, const Home& home,
                                 const std::string& tokenFileFlag = {});

/** Adds --passphrase-file (the passphrase of encrypted keys) to `desc`. */
void addPassphraseOption(boost::program_options::options_description& desc,
                         std::string& passphraseFile);

/**
 * The passphrase of a CLI command's encrypted keys: --passphrase-file, else the environment
 * variable GRIDLEDGER_KEY_PASSPHRASE, else a prompt when standard input is a terminal.
 */
[[nodiscard]] Passphrase cliPassphrase(const std::string& passphraseFile);

/**
 * How a CLI command writes new keys: plain unless `encrypt` or a --passphrase-file is given;
 * then encrypted under the passphrase from cliPassphrase (asked twice at a prompt).
 */
[[nodiscard]] Result<KeyProtection> cliProtection(bool encrypt, const std::string& passphraseFile);

/**
 * The listeners a command writes into node.conf (init, testnet): --rpc-addr, --rpc-port,
 * --p2p-addr, --p2p-port, --metrics-addr, --metrics-port, --admin-port. An address left empty
 * and a port left at -1 were not given.
 */
struct ListenFlags {
    std::string rpcAddr;
    std::string p2pAddr;
    std::string metricsAddr;
    std::int64_t rpcPort = -1;
    std::int64_t p2pPort = -1;
    std::int64_t metricsPort = -1;
    std::int64_t adminPort = -1;
};

/** Adds the ListenFlags options to `desc`; `portNote` ends each port's help line. */
void addListenOptions(boost::program_options::options_description& desc, ListenFlags& flags,
                      const std::string& portNote);

/** The flags given are in range: addresses are IP literals, ports 1..65535 (admin 0..65535). */
[[nodiscard]] Status checkListenFlags(const ListenFlags& flags);

/** Prints "gridledger <command>: <message>" to stderr and returns 1. */
int reportError(const std::string& command, const Error& error);

}  // namespace gridledger::node
