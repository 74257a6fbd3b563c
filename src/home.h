#pragma once

// The node's home directory: config/node.conf, config/genesis.json, keys/, data/.

#include <filesystem>
#include <string>
#include <vector>

#include <gridledger/base/result.h>
#include <gridledger/codec/p2p.h>
#include <gridledger/crypto/ed25519.h>
#include <gridledger/crypto/schnorr.h>

#include "key_file.h"

namespace gridledger::node {

/** keys/validator.key: the consensus key, which signs proposals, votes and timeouts only. */
inline constexpr std::string_view kConsensusKeyName = "validator";
/** keys/validator-account.key: the validator's account, which its governance transactions (and
 * any other) come from. */
inline constexpr std::string_view kAccountKeyName = "validator-account";

/** Most blocks one sync request may ask for. */
inline constexpr std::uint64_t kMaxSyncBatchBlocks = 1024;
/** The highest rpc.nice: the highest niceness Linux gives a thread. */
inline constexpr int kMaxRpcNice = 19;
/** The highest rpc.notify_interval_ms. */
inline constexpr std::uint64_t kMaxRpcNotifyIntervalMs = 10000;

/** Settings read from config/node.conf (INI). Every key has a default. */
struct NodeConfig {
    std::string rpcAddress = "127.0.0.1";
    std::uint16_t rpcPort = 8545;
    std::size_t rpcThreads = 2;
    /** How much nicer than the node the RPC threads run (rpc::ServerOptions::ioNice). */
    int rpcNice = 5;
    std::size_t rpcMaxBodyBytes = 1U << 20U;
    std::size_t rpcMaxBatch = 100;
    std::size_t rpcMaxConnections = 1024;
    std::size_t rpcMaxWsConnections = 256;
    std::size_t rpcMaxSubscriptions = 32;
    std::size_t rpcMaxSendBufferBytes = 4U << 20U;
    std::uint64_t rpcIdleTimeoutMs = 30000;
    std::uint64_t rpcRequestTimeoutMs = 30000;
    /** The shortest time between two fan-outs to WebSocket subscribers (rpc::ServerOptions). */
    std::uint64_t rpcNotifyIntervalMs = 20;
    /** Largest answer to one request or batch (docs/rpc.md, "Limits"). */
    std::size_t rpcMaxResponseBytes = std::size_t{16} << 20U;
    /** Host names the public listener accepts besides loopback and its address ("*": any). */
    std::vector<std::string> rpcAllowedHosts;
    /** Browser origins accepted besides http(s)://localhost and 127.0.0.1 ("*": any). */
    std::vector<std::string> rpcAllowedOrigins;
    /** The admin listener (node-internal methods): a loopback address only; port 0 disables. */
    std::string rpcAdminAddress = "127.0.0.1";
    std::uint16_t rpcAdminPort = 8546;
    /** A file holding the bearer token the public listener requires; empty: no token. */
    std::string rpcAuthTokenFile;
    /** The built explorer, served on the public listener at /explorer/ (docs/explorer.md); a
     * relative directory is relative to the home. Empty: not served. */
    std::string rpcExplorerDir;
    std::size_t mempoolMaxTxs = 50000;
    std::size_t mempoolMaxBytes = 64U << 20U;
    std::uint64_t mempoolNonceWindow = 64;
    std::size_t verifyThreads = 0;  // 0 = one per core
    /** Journal admitted transactions so that an acknowledged one survives a crash. */
    bool mempoolJournal = true;
    /** Committed blocks whose QCs are searched at start for votes this node did not record. */
    std::uint64_t doubleSignCheckHeight = 100;
    /** P2P listen address (an IP literal) and port. */
    std::string p2pAddress = "127.0.0.1";
    std::uint16_t p2pPort = 26656;
    /** Peers dialed at start and re-dialed after every disconnect: node_id@host:port, ... */
    std::vector<codec::PeerAddress> persistentPeers;
    /** Node ids allowed to connect besides the genesis validators (full nodes, auditors). */
    std::vector<NodeId> allowedNodes;
    /** A proposal more than this many blocks above the highest block the node holds certified
     * makes it sync committed blocks first; a full node that many blocks behind is not ready. */
    std::uint64_t syncLagBlocks = 32;
    /** Blocks asked for in one sync request. */
    std::uint64_t syncBatchBlocks = 256;
    std::string metricsAddress = "127.0.0.1";
    std::uint16_t metricsPort = 9464;
    std::string logLevel = "info";
    /** [log] format: "text" (the default) or "json", one JSON object per line. */
    std::string logFormat = "text";
    /** [keys]: where the node reads the passphrase of encrypted keys (docs/operations.md). A
     * relative file is relative to the home. */
    std::string keyPassphraseFile;
    std::string keyPassphraseEnv;
};

class Home {
  public:
    explicit Home(std::filesystem::path root) : root_(std::move(root)) {}

    /** --home, else $GRIDLEDGER_HOME, else ~/.gridledger. */
    [[nodiscard]] static Home resolve(const std::string& flag);

    [[nodiscard]] const std::filesystem::path& root() const { return root_; }
    [[nodiscard]] std::filesystem::path configFile() const {
        return root_ / "config" / "node.conf";
    }
    [[nodiscard]] std::filesystem::path genesisFile() const {
        return root_ / "config" / "genesis.json";
    }
    [[nodiscard]] std::filesystem::path dataDir() const { return root_ / "data"; }
    [[nodiscard]] std::filesystem::path keyFile(const std::string& name) const {
        return root_ / "keys" / (name + ".key");
    }
    [[nodiscard]] bool initialised() const { return std::filesystem::exists(genesisFile()); }

    /**
     * Writes a new account/validator key (mode 0600), encrypted if `protection` carries a
     * passphrase; fails if one of that name exists.
     */
    [[nodiscard]] Result<crypto::SecretKey> createKey(const std::string& name,
                                                      const KeyProtection& protection = {}) const;
    /** Writes `key` as keys/<name>.key (mode 0600); fails if one of that name exists. */
    [[nodiscard]] Status writeKey(const std::string& name, const crypto::SecretKey& key,
                                  const KeyProtection& protection = {}) const;
    /** Reads keys/<name>.key, asking `passphrase` only if the file is encrypted. */
    [[nodiscard]] Result<crypto::SecretKey> loadKey(const std::string& name,
                                                    Passphrase& passphrase) const;
    /** Reads a plain keys/<name>.key; an encrypted one fails for want of a passphrase. */
    [[nodiscard]] Result<crypto::SecretKey> loadKey(const std::string& name) const;
    /** The public key of keys/<name>.key, without the passphrase for an encrypted file. */
    [[nodiscard]] Result<PubKey> keyPublicKey(const std::string& name) const;
    /** Writes a new node key, keys/node.key (mode 0600); fails if one exists. */
    [[nodiscard]] Result<crypto::NodeKey> createNodeKey(const KeyProtection& protection = {}) const;
    [[nodiscard]] Result<crypto::NodeKey> loadNodeKey(Passphrase& passphrase) const;
    [[nodiscard]] Result<crypto::NodeKey> loadNodeKey() const;
    /** Whether keys/<name>.key ("node" for the node key) is encrypted. */
    [[nodiscard]] Result<bool> keyEncrypted(const std::string& name) const;
    /**
     * Rewrites the plain keys/<name>.key ("node" for the node key) encrypted under `protection`,
     * in place and atomically; fails if it is encrypted already.
     */
    [[nodiscard]] Status encryptKey(const std::string& name, const KeyProtection& protection) const;
    /** Names of the account keys in keys/, sorted. */
    [[nodiscard]] std::vector<std::string> keyNames() const;

    [[nodiscard]] Result<NodeConfig> loadConfig() const;
    /** Writes config/node.conf with every key of `config`, in the form loadConfig() reads. */
    [[nodiscard]] Status writeConfig(const NodeConfig& config) const;
    [[nodiscard]] Status writeDefaultConfig() const { return writeConfig(NodeConfig{}); }
    /**
     * The bearer token of `config.rpcAuthTokenFile` (a path relative to the home, or absolute):
     * the file's text without surrounding whitespace. Empty when no file is configured; kConfig
     * when the file cannot be read or holds no token.
     */
    [[nodiscard]] Result<std::string> loadRpcToken(const NodeConfig& config) const;
    /**
     * The directory of `config.rpcExplorerDir`: as given when absolute, under the home when
     * relative; empty when none is configured. Not checked here: the RPC server refuses to
     * start when it is not a directory.
     */
    [[nodiscard]] std::filesystem::path explorerDir(const NodeConfig& config) const;

  private:
    /** Writes keys/<name>.key: plain or encrypted, refusing an existing one unless `replace`. */
    [[nodiscard]] Status writeKeyFile(const std::string& name, ByteView secret,
                                      const std::string& publicKey, const KeyProtection& protection,
                                      bool replace) const;

    std::filesystem::path root_;
};

/** What checkConfigText found. */
struct ConfigCheck {
    /** One message per fault; empty when the node would accept the file. */
    std::vector<std::string> faults;
    /** The settings of the lines that parsed, defaults for the rest. */
    NodeConfig config;
};

/**
 * Every fault of node.conf's `text`, one message each: each unknown key and ill-typed value with
 * its line, then the values that parse but cannot be used (an address, a peer, a range).
 */
[[nodiscard]] ConfigCheck checkConfigText(const std::string& text);

/** Parses "node_id@host:port" (node id as 0x hex). */
[[nodiscard]] Result<codec::PeerAddress> parsePeerAddress(std::string_view text);
/** Renders "node_id@host:port". */
[[nodiscard]] std::string formatPeerAddress(const codec::PeerAddress& peer);

/**
 * The bearer token in the file at `path`: its text without surrounding whitespace. kConfig when
 * the file cannot be read, is empty, or the token has whitespace inside.
 */
[[nodiscard]] Result<std::string> readRpcToken(const std::filesystem::path& path);

/** Reads a whole file. */
[[nodiscard]] Result<std::string> readFile(const std::filesystem::path& path);
/** Writes a file atomically with exactly the given permissions (writeFileAtomically). */
[[nodiscard]] Status writeFile(const std::filesystem::path& path, std::string_view content,
                               std::filesystem::perms perms);

}  // namespace gridledger::node
