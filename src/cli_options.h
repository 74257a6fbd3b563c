#pragma once

// Shared option parsing for the subcommands.

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

/** Prints "gridledger <command>: <message>" to stderr and returns 1. */
int reportError(const std::string& command, const Error& error);

}  // namespace gridledger::node
