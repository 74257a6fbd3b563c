#pragma once

// TLS 1.3 with node certificates (docs/p2p.md, "Handshake and identity"). Private to p2p.

#include <functional>
#include <memory>
#include <optional>

#include <boost/asio/ssl/context.hpp>
#include <openssl/ssl.h>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/crypto/ed25519.h>
#include <gridledger/p2p/options.h>

namespace gridledger::p2p::tls {

/**
 * What one connection's handshake checks about the peer certificate. The network decides who is
 * admitted (allowed, not banned, not ourselves); `expected` binds the node id when dialing.
 * Lives as long as the connection's SSL object.
 */
struct PeerCheck {
    /** Returns the reason to refuse `nodeId`, or nothing to admit it. */
    std::function<std::optional<CloseReason>(const NodeId& nodeId)> admit;
    std::optional<NodeId> expected;
    /** Set by the handshake: the node id of the peer certificate's Ed25519 key. */
    std::optional<NodeId> presented;
    /** Set by the handshake when `presented` matched `expected`: the peer's identity. */
    std::optional<NodeId> verified;
    /** Set by the handshake when the certificate was refused. */
    std::optional<CloseReason> refusal;
};

/**
 * A TLS context for `key`: TLS 1.3 only, a fresh self-signed X.509 certificate for the Ed25519
 * node key (in memory only), a peer certificate required on both sides and checked by the
 * PeerCheck attached to each connection, no session tickets or resumption.
 */
[[nodiscard]] Result<std::unique_ptr<boost::asio::ssl::context>> makeContext(
    const crypto::NodeKey& key);

/** Attaches `check` to a connection before its handshake; `check` must outlive `ssl`. */
[[nodiscard]] Status attach(SSL* ssl, PeerCheck* check);

/** The node id of a certificate's Ed25519 public key; fails for any other key type. */
[[nodiscard]] Result<NodeId> nodeIdOfCertificate(X509* cert);

}  // namespace gridledger::p2p::tls
