#include "home.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string_view>

#include <boost/asio/ip/address.hpp>
#include <boost/program_options.hpp>
#include <spdlog/common.h>
#include <sys/stat.h>

namespace gridledger::node {
namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace {

constexpr std::string_view kNodeKeyName = "node";

std::string trim(const std::string& text) {
    const auto begin = text.find_first_not_of(" \t\r\n");
    const auto end = text.find_last_not_of(" \t\r\n");
    return begin == std::string::npos ? std::string() : text.substr(begin, end - begin + 1);
}

/** Mode of keys/: only the owner may list or enter it. */
constexpr mode_t kKeysDirMode = 0700;
constexpr mode_t kSecretMode = 0600;

bool validKeyName(const std::string& name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
    });
}

KeyKind kindOf(const std::string& name) {
    return name == kNodeKeyName ? KeyKind::kNode : KeyKind::kAccount;
}

std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto comma = text.find(',', start);
        const auto item = trim(
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (!item.empty()) {
            items.push_back(item);
        }
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return items;
}

/** `list` as a node.conf value: " a,b,c", or nothing for an empty list. */
std::string joined(const std::vector<std::string>& list) {
    std::string out;
    for (const std::string& item : list) {
        out += (out.empty() ? " " : ",") + item;
    }
    return out;
}

Result<NodeId> parseNodeId(std::string_view text) {
    auto nodeId = NodeId::fromHex(text);
    if (!nodeId) {
        return fail(ErrorCode::kConfig,
                    "node id '" + std::string(text) + "' is not 0x followed by 40 hex digits");
    }
    return *nodeId;
}

}  // namespace

Result<codec::PeerAddress> parsePeerAddress(std::string_view text) {
    const auto at = text.find('@');
    const auto colon = text.rfind(':');
    if (at == std::string_view::npos || colon == std::string_view::npos || colon < at) {
        return fail(ErrorCode::kConfig,
                    "peer '" + std::string(text) + "' is not node_id@host:port");
    }
    GL_ASSIGN_OR_RETURN(nodeId, parseNodeId(text.substr(0, at)));
    const std::string host(text.substr(at + 1, colon - at - 1));
    const std::string portText(text.substr(colon + 1));
    if (!codec::isValidHost(host)) {
        return fail(ErrorCode::kConfig, "peer '" + std::string(text) + "' has an invalid host");
    }
    std::uint32_t port = 0;
    const auto* end = portText.data() + portText.size();
    const auto parsed = std::from_chars(portText.data(), end, port);
    if (portText.empty() || parsed.ec != std::errc{} || parsed.ptr != end || port == 0 ||
        port > 65535) {
        return fail(ErrorCode::kConfig, "peer '" + std::string(text) + "' has an invalid port");
    }
    return codec::PeerAddress{nodeId, host, static_cast<std::uint16_t>(port)};
}

std::string formatPeerAddress(const codec::PeerAddress& peer) {
    return peer.nodeId.hex() + "@" + peer.host + ":" + std::to_string(peer.port);
}

Home Home::resolve(const std::string& flag) {
    if (!flag.empty()) {
        return Home(flag);
    }
    if (const char* env = std::getenv("GRIDLEDGER_HOME"); env != nullptr && *env != '\0') {
        return Home(env);
    }
    const char* home = std::getenv("HOME");
    return Home(fs::path(home != nullptr ? home : ".") / ".gridledger");
}

Result<std::string> readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return fail(ErrorCode::kIo, "cannot read " + path.string());
    }
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

Status writeFile(const fs::path& path, std::string_view content, fs::perms perms) {
    return writeFileAtomically(path, content, static_cast<mode_t>(perms & fs::perms::mask));
}

Status Home::writeKeyFile(const std::string& name, ByteView secret, const std::string& publicKey,
                          const KeyProtection& protection, bool replace) const {
    const fs::path path = keyFile(name);
    std::error_code ec;
    // symlink_status: a link at the key's path counts as a key, dangling or not.
    if (!replace && fs::exists(fs::symlink_status(path, ec))) {
        return fail(ErrorCode::kInvalidArgument, "a key named '" + name + "' already exists");
    }
    GL_ASSIGN_OR_RETURN(text, encodeKeyFile(secret, kindOf(name), name, publicKey, protection));
    GL_TRY(writeFileAtomically(path, text, kSecretMode, kKeysDirMode));
    // A keys/ made by an older gridledger may be wider; nobody else needs to list it.
    if (::chmod(path.parent_path().c_str(), kKeysDirMode) != 0) {
        return fail(ErrorCode::kIo, "cannot chmod 700 " + path.parent_path().string());
    }
    return {};
}

Result<crypto::SecretKey> Home::createKey(const std::string& name,
                                          const KeyProtection& protection) const {
    const auto key = crypto::SecretKey::generate();
    GL_TRY(writeKey(name, key, protection));
    return key;
}

Status Home::writeKey(const std::string& name, const crypto::SecretKey& key,
                      const KeyProtection& protection) const {
    if (name == kNodeKeyName || !validKeyName(name)) {
        return fail(ErrorCode::kInvalidArgument, "key names use letters, digits, '-' and '_'");
    }
    return writeKeyFile(name, key.secret().view(), key.publicKey().hex(), protection, false);
}

Result<crypto::SecretKey> Home::loadKey(const std::string& name, Passphrase& passphrase) const {
    if (name == kNodeKeyName || !validKeyName(name)) {
        return fail(ErrorCode::kInvalidArgument, "no account key named '" + name + "'");
    }
    GL_ASSIGN_OR_RETURN(text, readSecretFile(keyFile(name)));
    GL_ASSIGN_OR_RETURN(info, inspectKeyFile(text, name));
    GL_ASSIGN_OR_RETURN(bytes, decodeKeyFile(text, KeyKind::kAccount, name, passphrase));
    GL_ASSIGN_OR_RETURN(key, crypto::SecretKey::fromBytes(bytes));
    if (info.encrypted && key.publicKey().hex() != info.publicKey) {
        return fail(ErrorCode::kConfig, "key file of '" + name + "' does not match its public key");
    }
    return key;
}

Result<crypto::SecretKey> Home::loadKey(const std::string& name) const {
    Passphrase none;
    return loadKey(name, none);
}

Result<PubKey> Home::keyPublicKey(const std::string& name) const {
    if (name == kNodeKeyName || !validKeyName(name)) {
        return fail(ErrorCode::kInvalidArgument, "no account key named '" + name + "'");
    }
    GL_ASSIGN_OR_RETURN(text, readSecretFile(keyFile(name)));
    GL_ASSIGN_OR_RETURN(info, inspectKeyFile(text, name));
    if (info.encrypted) {
        return PubKey::fromHex(info.publicKey);
    }
    GL_ASSIGN_OR_RETURN(key, loadKey(name));
    return key.publicKey();
}

Result<crypto::NodeKey> Home::createNodeKey(const KeyProtection& protection) const {
    const auto key = crypto::NodeKey::generate();
    GL_TRY(writeKeyFile(std::string(kNodeKeyName), key.seed().view(), key.publicKey().hex(),
                        protection, false));
    return key;
}

Result<crypto::NodeKey> Home::loadNodeKey(Passphrase& passphrase) const {
    const std::string name(kNodeKeyName);
    GL_ASSIGN_OR_RETURN(text, readSecretFile(keyFile(name)));
    GL_ASSIGN_OR_RETURN(info, inspectKeyFile(text, name));
    GL_ASSIGN_OR_RETURN(bytes, decodeKeyFile(text, KeyKind::kNode, name, passphrase));
    GL_ASSIGN_OR_RETURN(key, crypto::NodeKey::fromSeed(bytes));
    if (info.encrypted && key.publicKey().hex() != info.publicKey) {
        return fail(ErrorCode::kConfig, "the node key file does not match its public key");
    }
    return key;
}

Result<crypto::NodeKey> Home::loadNodeKey() const {
    Passphrase none;
    return loadNodeKey(none);
}

Result<bool> Home::keyEncrypted(const std::string& name) const {
    GL_ASSIGN_OR_RETURN(text, readSecretFile(keyFile(name)));
    GL_ASSIGN_OR_RETURN(info, inspectKeyFile(text, name));
    return info.encrypted;
}

Status Home::encryptKey(const std::string& name, const KeyProtection& protection) const {
    if (!protection.passphrase) {
        return fail(ErrorCode::kInvalidArgument, "encrypting a key needs a passphrase");
    }
    GL_ASSIGN_OR_RETURN(encrypted, keyEncrypted(name));
    if (encrypted) {
        return fail(ErrorCode::kInvalidArgument, "key '" + name + "' is encrypted already");
    }
    if (name == kNodeKeyName) {
        GL_ASSIGN_OR_RETURN(key, loadNodeKey());
        return writeKeyFile(name, key.seed().view(), key.publicKey().hex(), protection, true);
    }
    GL_ASSIGN_OR_RETURN(key, loadKey(name));
    return writeKeyFile(name, key.secret().view(), key.publicKey().hex(), protection, true);
}

std::vector<std::string> Home::keyNames() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root_ / "keys", ec)) {
        if (entry.path().extension() == ".key" && entry.path().stem() != kNodeKeyName) {
            names.push_back(entry.path().stem().string());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

Result<std::string> readRpcToken(const fs::path& path) {
    auto text = readFile(path);
    if (!text) {
        return fail(ErrorCode::kConfig, "RPC token file: cannot read " + path.string());
    }
    const std::string_view space = " \t\r\n";
    const std::size_t first = text->find_first_not_of(space);
    if (first == std::string::npos) {
        return fail(ErrorCode::kConfig, "RPC token file " + path.string() + " is empty");
    }
    std::string token = text->substr(first, text->find_last_not_of(space) - first + 1);
    if (token.find_first_of(space) != std::string::npos) {
        return fail(ErrorCode::kConfig,
                    "RPC token file " + path.string() + ": the token contains whitespace");
    }
    return token;
}

Result<std::string> Home::loadRpcToken(const NodeConfig& config) const {
    if (config.rpcAuthTokenFile.empty()) {
        return std::string();
    }
    const fs::path path(config.rpcAuthTokenFile);
    return readRpcToken(path.is_relative() ? root_ / path : path);
}

std::filesystem::path Home::explorerDir(const NodeConfig& config) const {
    if (config.rpcExplorerDir.empty()) {
        return {};
    }
    const fs::path dir(config.rpcExplorerDir);
    return dir.is_relative() ? root_ / dir : dir;
}

namespace {

/** The list-valued keys, read as text and parsed after the INI pass. */
struct ConfigLists {
    std::string persistentPeers;
    std::string allowedNodes;
    std::string allowedHosts;
    std::string allowedOrigins;
};

/** Every node.conf key, its type and its default: the one table both readers use. */
po::options_description configOptions(NodeConfig& c, ConfigLists& lists) {
    std::string& persistentPeers = lists.persistentPeers;
    std::string& allowedNodes = lists.allowedNodes;
    std::string& allowedHosts = lists.allowedHosts;
    std::string& allowedOrigins = lists.allowedOrigins;
    po::options_description desc;
    desc.add_options()  //
        ("rpc.address", po::value(&c.rpcAddress)->default_value(c.rpcAddress))(
            "rpc.port", po::value(&c.rpcPort)->default_value(c.rpcPort))(
            "rpc.threads", po::value(&c.rpcThreads)->default_value(c.rpcThreads))(
            "rpc.nice", po::value(&c.rpcNice)->default_value(c.rpcNice))(
            "rpc.max_body_bytes", po::value(&c.rpcMaxBodyBytes)->default_value(c.rpcMaxBodyBytes))(
            "rpc.max_batch", po::value(&c.rpcMaxBatch)->default_value(c.rpcMaxBatch))(
            "rpc.max_connections",
            po::value(&c.rpcMaxConnections)->default_value(c.rpcMaxConnections))(
            "rpc.max_ws_connections",
            po::value(&c.rpcMaxWsConnections)->default_value(c.rpcMaxWsConnections))(
            "rpc.max_subscriptions",
            po::value(&c.rpcMaxSubscriptions)->default_value(c.rpcMaxSubscriptions))(
            "rpc.max_send_buffer_bytes",
            po::value(&c.rpcMaxSendBufferBytes)->default_value(c.rpcMaxSendBufferBytes))(
            "rpc.idle_timeout_ms",
            po::value(&c.rpcIdleTimeoutMs)->default_value(c.rpcIdleTimeoutMs))(
            "rpc.request_timeout_ms",
            po::value(&c.rpcRequestTimeoutMs)->default_value(c.rpcRequestTimeoutMs))(
            "rpc.notify_interval_ms",
            po::value(&c.rpcNotifyIntervalMs)->default_value(c.rpcNotifyIntervalMs))(
            "rpc.max_response_bytes",
            po::value(&c.rpcMaxResponseBytes)->default_value(c.rpcMaxResponseBytes))(
            "rpc.allowed_hosts", po::value(&allowedHosts)->default_value(""))(
            "rpc.allowed_origins", po::value(&allowedOrigins)->default_value(""))(
            "rpc.admin_address", po::value(&c.rpcAdminAddress)->default_value(c.rpcAdminAddress))(
            "rpc.admin_port", po::value(&c.rpcAdminPort)->default_value(c.rpcAdminPort))(
            "rpc.auth_token_file",
            po::value(&c.rpcAuthTokenFile)->default_value(c.rpcAuthTokenFile))(
            "rpc.explorer_dir", po::value(&c.rpcExplorerDir)->default_value(c.rpcExplorerDir))(
            "mempool.max_txs", po::value(&c.mempoolMaxTxs)->default_value(c.mempoolMaxTxs))(
            "mempool.max_bytes", po::value(&c.mempoolMaxBytes)->default_value(c.mempoolMaxBytes))(
            "mempool.nonce_window",
            po::value(&c.mempoolNonceWindow)->default_value(c.mempoolNonceWindow))(
            "mempool.verify_threads", po::value(&c.verifyThreads)->default_value(c.verifyThreads))(
            "mempool.journal", po::value(&c.mempoolJournal)->default_value(c.mempoolJournal))(
            "consensus.double_sign_check_height",
            po::value(&c.doubleSignCheckHeight)->default_value(c.doubleSignCheckHeight))(
            "p2p.address", po::value(&c.p2pAddress)->default_value(c.p2pAddress))(
            "p2p.port", po::value(&c.p2pPort)->default_value(c.p2pPort))(
            "p2p.persistent_peers", po::value(&persistentPeers)->default_value(""))(
            "p2p.allowed_nodes", po::value(&allowedNodes)->default_value(""))(
            "p2p.sync_lag_blocks", po::value(&c.syncLagBlocks)->default_value(c.syncLagBlocks))(
            "p2p.sync_batch_blocks",
            po::value(&c.syncBatchBlocks)->default_value(c.syncBatchBlocks))(
            "metrics.address", po::value(&c.metricsAddress)->default_value(c.metricsAddress))(
            "metrics.port", po::value(&c.metricsPort)->default_value(c.metricsPort))(
            "log.level", po::value(&c.logLevel)->default_value(c.logLevel))(
            "log.format", po::value(&c.logFormat)->default_value(c.logFormat))(
            "keys.passphrase_file", po::value(&c.keyPassphraseFile)->default_value(""))(
            "keys.passphrase_env", po::value(&c.keyPassphraseEnv)->default_value(""));
    return desc;
}

bool isIpAddress(const std::string& text) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(text, ec);
    return !ec;
}

/**
 * The faults of a config whose keys all parsed: lists, addresses and ranges. Each is one
 * message naming the key.
 */
std::vector<std::string> semanticFaults(NodeConfig& c, const ConfigLists& lists) {
    std::vector<std::string> faults;
    for (const auto& item : splitList(lists.persistentPeers)) {
        if (auto peer = parsePeerAddress(item)) {
            c.persistentPeers.push_back(std::move(*peer));
        } else {
            faults.push_back("p2p.persistent_peers: " + peer.error().message);
        }
    }
    for (const auto& item : splitList(lists.allowedNodes)) {
        if (auto nodeId = parseNodeId(item)) {
            c.allowedNodes.push_back(*nodeId);
        } else {
            faults.push_back("p2p.allowed_nodes: " + nodeId.error().message);
        }
    }
    c.rpcAllowedHosts = splitList(lists.allowedHosts);
    c.rpcAllowedOrigins = splitList(lists.allowedOrigins);
    // The admin methods reveal and steer the node itself: they must never be reachable from
    // another machine, whatever else the operator exposes.
    boost::system::error_code ec;
    const auto adminAddress = boost::asio::ip::make_address(c.rpcAdminAddress, ec);
    if (ec || !adminAddress.is_loopback()) {
        faults.push_back(
            "rpc.admin_address must be a loopback address such as 127.0.0.1 or ::1, not \"" +
            c.rpcAdminAddress + "\"");
    }
    for (const auto& [key, address] :
         {std::pair{"rpc.address", &c.rpcAddress}, std::pair{"p2p.address", &c.p2pAddress},
          std::pair{"metrics.address", &c.metricsAddress}}) {
        if (!isIpAddress(*address)) {
            faults.push_back(std::string(key) + " must be an IP address such as 127.0.0.1 or " +
                             "0.0.0.0, not \"" + *address + "\"");
        }
    }
    for (const auto& [key, port] :
         {std::pair{"rpc.port", c.rpcPort}, std::pair{"p2p.port", c.p2pPort},
          std::pair{"metrics.port", c.metricsPort}}) {
        if (port == 0) {
            faults.push_back(std::string(key) + " must be 1..65535, not 0");
        }
    }
    if (c.rpcNice < 0 || c.rpcNice > kMaxRpcNice) {
        faults.push_back("rpc.nice must be 0.." + std::to_string(kMaxRpcNice) + ", not " +
                         std::to_string(c.rpcNice));
    }
    if (c.rpcNotifyIntervalMs > kMaxRpcNotifyIntervalMs) {
        faults.push_back("rpc.notify_interval_ms must be 0.." +
                         std::to_string(kMaxRpcNotifyIntervalMs) + ", not " +
                         std::to_string(c.rpcNotifyIntervalMs));
    }
    if (c.syncBatchBlocks == 0 || c.syncBatchBlocks > kMaxSyncBatchBlocks) {
        faults.push_back("p2p.sync_batch_blocks must be 1.." + std::to_string(kMaxSyncBatchBlocks));
    }
    if (spdlog::level::from_str(c.logLevel) == spdlog::level::off && c.logLevel != "off") {
        faults.push_back(
            "log.level must be one of trace, debug, info, warning, error, critical, "
            "off, not \"" +
            c.logLevel + "\"");
    }
    if (c.logFormat != "text" && c.logFormat != "json") {
        faults.push_back("log.format must be text or json, not \"" + c.logFormat + "\"");
    }
    return faults;
}

}  // namespace

Result<NodeConfig> Home::loadConfig() const {
    NodeConfig c;
    ConfigLists lists;
    const po::options_description desc = configOptions(c, lists);
    std::ifstream in(configFile());
    if (!in) {
        return fail(ErrorCode::kConfig, "cannot read " + configFile().string());
    }
    try {
        po::variables_map vm;
        po::store(po::parse_config_file(in, desc), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        return fail(ErrorCode::kConfig, configFile().string() + ": " + e.what());
    }
    const auto faults = semanticFaults(c, lists);
    if (!faults.empty()) {
        return fail(ErrorCode::kConfig, faults.front());
    }
    return c;
}

ConfigCheck checkConfigText(const std::string& text) {
    ConfigCheck check;
    // Line by line first, so that every unknown or ill-typed key is named with its line; the
    // lines that parse make the config whose values are checked next.
    std::istringstream lines(text);
    std::string clean;
    std::string line;
    std::string section;
    NodeConfig scratch;
    ConfigLists scratchLists;
    const po::options_description known = configOptions(scratch, scratchLists);
    for (int number = 1; std::getline(lines, line); ++number) {
        const std::string item = trim(line);
        if (item.empty() || item[0] == '#' || item[0] == ';') {
            continue;
        }
        const auto report = [&](std::initializer_list<std::string_view> parts) {
            std::string fault = "node.conf line ";
            fault += std::to_string(number);
            fault += ": ";
            for (const std::string_view part : parts) {
                fault += part;
            }
            check.faults.push_back(std::move(fault));
        };
        if (item.front() == '[') {
            if (item.back() != ']') {
                report({"malformed section header \"", item, "\""});
            } else {
                section = trim(item.substr(1, item.size() - 2));
                clean += item;
                clean += '\n';
            }
            continue;
        }
        const auto equals = item.find('=');
        if (equals == std::string::npos) {
            report({"\"", item, "\" is not key = value"});
            continue;
        }
        std::string key = section.empty() ? std::string() : section + ".";
        key += trim(item.substr(0, equals));
        if (known.find_nothrow(key, false) == nullptr) {
            report({"unknown key ", key});
            continue;
        }
        NodeConfig one;
        ConfigLists oneLists;
        const po::options_description desc = configOptions(one, oneLists);
        std::string single = section.empty() ? std::string() : "[" + section + "]\n";
        single += item;
        single += '\n';
        std::istringstream in(single);
        try {
            po::variables_map vm;
            po::store(po::parse_config_file(in, desc), vm);
            po::notify(vm);
            clean += item;
            clean += '\n';
        } catch (const po::error& e) {
            report({key, " = \"", trim(item.substr(equals + 1)), "\" is not a valid value (",
                    e.what(), ")"});
        }
    }
    ConfigLists lists;
    const po::options_description desc = configOptions(check.config, lists);
    std::istringstream in(clean);
    try {
        po::variables_map vm;
        po::store(po::parse_config_file(in, desc), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        check.faults.push_back(std::string("node.conf: ") + e.what());  // a key given twice
        return check;
    }
    for (auto& fault : semanticFaults(check.config, lists)) {
        check.faults.push_back("node.conf: " + fault);
    }
    return check;
}

Status Home::writeConfig(const NodeConfig& c) const {
    std::string peers;
    for (const auto& peer : c.persistentPeers) {
        peers += (peers.empty() ? "" : ",") + formatPeerAddress(peer);
    }
    std::string allowed;
    for (const auto& nodeId : c.allowedNodes) {
        allowed += (allowed.empty() ? "" : ",") + nodeId.hex();
    }
    std::ostringstream out;
    out << "# GridLedger node configuration (INI). Every key is optional; docs/operations.md "
           "lists\n"
        << "# the defaults.\n"
        << "[rpc]\n"
        << "address = " << c.rpcAddress << "\n"
        << "port = " << c.rpcPort << "\n"
        << "threads = " << c.rpcThreads << "\n"
        << "nice = " << c.rpcNice << "\n"
        << "max_body_bytes = " << c.rpcMaxBodyBytes << "\n"
        << "max_batch = " << c.rpcMaxBatch << "\n"
        << "max_connections = " << c.rpcMaxConnections << "\n"
        << "max_ws_connections = " << c.rpcMaxWsConnections << "\n"
        << "max_subscriptions = " << c.rpcMaxSubscriptions << "\n"
        << "max_send_buffer_bytes = " << c.rpcMaxSendBufferBytes << "\n"
        << "idle_timeout_ms = " << c.rpcIdleTimeoutMs << "\n"
        << "request_timeout_ms = " << c.rpcRequestTimeoutMs << "\n"
        << "notify_interval_ms = " << c.rpcNotifyIntervalMs << "\n"
        << "# largest answer to one request or batch; beyond it: error -32016\n"
        << "max_response_bytes = " << c.rpcMaxResponseBytes << "\n"
        << "# Host names (DNS rebinding) and browser origins (cross-site WebSocket) accepted\n"
        << "# besides loopback, comma-separated; * accepts any\n"
        << "allowed_hosts =" << joined(c.rpcAllowedHosts) << "\n"
        << "allowed_origins =" << joined(c.rpcAllowedOrigins) << "\n"
        << "# node-internal methods (node_getPeers) served here only; loopback only, 0 disables\n"
        << "admin_address = " << c.rpcAdminAddress << "\n"
        << "admin_port = " << c.rpcAdminPort << "\n"
        << "# a file holding a token every public request must carry as Authorization: Bearer\n"
        << "auth_token_file =" << (c.rpcAuthTokenFile.empty() ? "" : " ") << c.rpcAuthTokenFile
        << "\n"
        << "# the built explorer (docs/explorer.md), served at /explorer/; relative to the home;\n"
        << "# empty: not served\n"
        << "explorer_dir =" << (c.rpcExplorerDir.empty() ? "" : " ") << c.rpcExplorerDir << "\n\n"
        << "[mempool]\n"
        << "max_txs = " << c.mempoolMaxTxs << "\n"
        << "max_bytes = " << c.mempoolMaxBytes << "\n"
        << "nonce_window = " << c.mempoolNonceWindow << "\n"
        << "# 0 = one signature-verification thread per core\n"
        << "verify_threads = " << c.verifyThreads << "\n"
        << "# true: tx_submit answers only once the transaction is on disk (the admission "
           "journal)\n"
        << "journal = " << (c.mempoolJournal ? "true" : "false") << "\n\n"
        << "[consensus]\n"
        << "# at start, refuse to sign if the last this many blocks carry a vote of this key\n"
        << "# that this node did not record (another instance may be running with the key)\n"
        << "double_sign_check_height = " << c.doubleSignCheckHeight << "\n\n"
        << "[p2p]\n"
        << "address = " << c.p2pAddress << "\n"
        << "port = " << c.p2pPort << "\n"
        << "# node_id@host:port of peers to keep connected, comma-separated\n"
        << "persistent_peers =" << (peers.empty() ? "" : " ") << peers << "\n"
        << "# node ids allowed to connect besides the genesis validators, comma-separated\n"
        << "allowed_nodes =" << (allowed.empty() ? "" : " ") << allowed << "\n"
        << "# sync committed blocks first when a proposal is this many blocks ahead\n"
        << "sync_lag_blocks = " << c.syncLagBlocks << "\n"
        << "sync_batch_blocks = " << c.syncBatchBlocks << "\n\n"
        << "[metrics]\n"
        << "# Prometheus text at http://address:port/metrics\n"
        << "address = " << c.metricsAddress << "\n"
        << "port = " << c.metricsPort << "\n\n"
        << "[log]\n"
        << "level = " << c.logLevel << "\n"
        << "# text, or json: one JSON object per line (time, level, component, message, fields)\n"
        << "format = " << c.logFormat << "\n\n"
        << "[keys]\n"
        << "# where the node reads the passphrase of encrypted keys: a file (relative to the "
           "home)\n"
        << "# or the name of an environment variable; neither: ask on the terminal\n"
        << "passphrase_file =" << (c.keyPassphraseFile.empty() ? "" : " ") << c.keyPassphraseFile
        << "\n"
        << "passphrase_env =" << (c.keyPassphraseEnv.empty() ? "" : " ") << c.keyPassphraseEnv
        << "\n";
    return writeFile(configFile(), out.str(),
                     fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                         fs::perms::others_read);
}

}  // namespace gridledger::node
