#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/fwd.h>

#include <gridledger/base/bytes.h>
#include <gridledger/codec/p2p.h>

namespace gridledger::p2p {

/** The kind of an application message (stable wire numbers, proto/p2p.proto). */
using MessageKind = codec::MessageKind;
/** An application message: a kind and opaque payload bytes. */
using Message = codec::NetMessage;
/** A node id with the host:port where it listens. */
using PeerAddress = codec::PeerAddress;

/** Size bounds of the transport (docs/p2p.md, "Limits"). */
struct Limits {
    /**
     * Largest frame body (encoded Envelope) sent or accepted. A peer announcing a larger length
     * is dropped and gets BanPolicy::oversizedFramePoints. Default: 16 MiB (the largest block)
     * plus 64 KiB for the envelope and the block's certificates.
     */
    std::size_t maxFrameBytes = (std::size_t{16} << 20U) + (std::size_t{64} << 10U);
    /** Most frames waiting in one peer's send queue (the frame being written included). */
    std::size_t maxQueueMessages = 4096;
    /** Most bytes waiting in one peer's send queue; at least maxFrameBytes. */
    std::size_t maxQueueBytes = std::size_t{64} << 20U;
    /**
     * Most inbound connections still in the handshake (TCP accepted, no hello yet); beyond it new
     * ones are closed at accept.
     */
    std::size_t maxPendingHandshakes = 64;
    /** Most of those from one remote IP address, so that one address cannot take them all. */
    std::size_t maxPendingHandshakesPerIp = 8;
    /**
     * Most open connections with one node id: the one in use plus those retired by the
     * one-connection rule (docs/p2p.md §6) that are still winding down. A further connection
     * of that node id is closed as soon as its hello arrives (kTooManyConnections).
     */
    std::size_t maxConnectionsPerNode = 3;
    /**
     * Most bytes that the read buffers of all connections hold together. A buffer grows with the
     * bytes that arrive (never with the length a frame announces); a connection whose buffer
     * cannot grow within this budget stops reading until it can. At least maxFrameBytes.
     */
    std::size_t maxInboundBufferBytes = std::size_t{96} << 20U;
    /**
     * Per-peer inbound budget, two token buckets: frame bytes and frames per second, each with
     * the burst it may hold. A peer past either is not read until its debt is repaid
     * (backpressure), and each such pause costs it BanPolicy::floodPoints. The defaults are far
     * above what consensus, gossip and block sync send (docs/p2p.md §3). The byte burst is at
     * least maxFrameBytes.
     */
    std::size_t inboundBytesPerSecond = std::size_t{64} << 20U;
    std::size_t inboundBytesBurst = std::size_t{128} << 20U;
    std::size_t inboundMessagesPerSecond = 2'000;
    std::size_t inboundMessagesBurst = 4'000;
    /** Most addresses taken from one peer-exchange frame; the rest are ignored. */
    std::size_t maxExchangedAddresses = 1024;
};

/** Timers of the transport (docs/p2p.md). Every duration must be positive. */
struct Timers {
    /** Time to connect, finish TLS and receive the peer's hello. */
    std::chrono::milliseconds handshakeTimeout{10'000};
    /** A ping is sent to each peer this often. */
    std::chrono::milliseconds pingInterval{5'000};
    /** A peer from which no complete frame arrived for this long is dropped; > pingInterval. */
    std::chrono::milliseconds pingTimeout{20'000};
    /** A peer that has not taken one frame off our socket for this long is dropped. */
    std::chrono::milliseconds writeTimeout{20'000};
    /** First re-dial delay after a disconnect; doubles per failed attempt. */
    std::chrono::milliseconds reconnectBase{500};
    /** Largest re-dial delay (before jitter). */
    std::chrono::milliseconds reconnectCap{30'000};
    /** Known addresses are sent to every peer this often (and once when it connects). */
    std::chrono::milliseconds peerExchangeInterval{30'000};
};

/** Ban score rules (docs/p2p.md, "Ban score"). */
struct BanPolicy {
    /** A node whose score reaches this many points is disconnected and banned. */
    std::uint32_t threshold = 100;
    /** How long a ban lasts; the score restarts at 0 afterwards. */
    std::chrono::milliseconds banDuration{std::chrono::minutes(10)};
    /** Points for a frame that does not decode or breaks the protocol (e.g. a second hello). */
    std::uint32_t malformedFramePoints = 50;
    /** Points for announcing a frame longer than Limits::maxFrameBytes, or an empty frame. */
    std::uint32_t oversizedFramePoints = 100;
    /** Points each time a peer's inbound budget (Limits::inbound*) ran out and reading paused. */
    std::uint32_t floodPoints = 5;
    /** Points forgiven per minute without new misbehaviour. */
    std::uint32_t decayPerMinute = 10;
};

/** Everything a Network needs besides its key. */
struct Options {
    /** IP address to listen on (an IP literal, e.g. "0.0.0.0" or "127.0.0.1"). */
    std::string listenHost = "127.0.0.1";
    /** TCP port; 0 binds an ephemeral port, which Network::port() reports after start(). */
    std::uint16_t listenPort = 0;
    /**
     * Node ids allowed to connect and be dialed: the validators of genesis plus configured
     * extras. Our own id may be in it; we never connect to ourselves.
     */
    std::set<NodeId> allowed;
    /**
     * Peers dialed at start and re-dialed after every disconnect, each while it is allowed (a
     * peer outside the allow-list waits until Network::setAllowed lets it in).
     */
    std::vector<PeerAddress> persistentPeers;
    /**
     * Also dial allowed nodes whose addresses arrive through peer exchange (with the same
     * backoff as persistent peers), so that validators form a full mesh.
     */
    bool dialExchangedPeers = true;
    Limits limits{};
    Timers timers{};
    BanPolicy ban{};
    /** Seeds the re-dial jitter and ping nonces, so runs are reproducible. */
    std::uint64_t seed = 0;
    /** Logger (named "p2p" by convention); when null, spdlog::get("p2p") or nothing. */
    std::shared_ptr<spdlog::logger> logger;
};

/** Why a connection closed (docs/p2p.md). Values are for logs and tests, not the wire. */
enum class CloseReason : std::uint8_t {
    kStopped,            // Network::stop()
    kIoError,            // the peer closed the connection, or a socket / TLS error
    kHandshakeFailed,    // TLS failed for another reason (no certificate, not TLS 1.3, alert)
    kNotAllowed,         // the certificate's node id is not in Options::allowed
    kNodeIdMismatch,     // dialed node id differs from the certificate's
    kBanned,             // the node is banned
    kSelf,               // the certificate carries our own node id
    kTimeout,            // handshake (TCP, TLS, hello) not done within handshakeTimeout
    kProtocol,           // bad hello: wrong version, missing, or sent twice
    kFrameTooLarge,      // announced length above maxFrameBytes, or 0
    kMalformedFrame,     // the frame did not decode
    kKeepAliveTimeout,   // no frame within pingTimeout
    kWriteTimeout,       // the peer did not read within writeTimeout
    kQueueOverflow,      // send queue full with nothing droppable
    kDuplicate,          // another connection to this node id won the tie-break
    kSuperseded,         // replaced by a connection that won the tie-break
    kMisbehaviour,       // the ban score reached the threshold
    kTooManyHandshakes,  // Limits::maxPendingHandshakes or maxPendingHandshakesPerIp reached
    kTooManyConnections  // Limits::maxConnectionsPerNode reached for the peer's node id
};

/** A stable snake_case name of a reason, e.g. "not_allowed". */
[[nodiscard]] std::string_view reasonName(CloseReason reason);

/** A connection that closed before (or without) its peer being up. */
struct ConnectionFailure {
    /** The verified node id, else the dialed one; zero when neither is known. */
    NodeId nodeId;
    bool outbound = false;
    /** host:port dialed, or the remote address of an inbound connection. */
    std::string address;
    CloseReason reason = CloseReason::kIoError;
    std::string detail;
};

/** The state of one connected peer. */
struct PeerInfo {
    NodeId nodeId;
    /** True when we dialed the connection in use. */
    bool outbound = false;
    /** Remote host:port of the connection. */
    std::string remoteAddress;
    /** Frames waiting in the send queue (the one being written included) and their bytes. */
    std::size_t queuedMessages = 0;
    std::size_t queuedBytes = 0;
    /** Droppable messages dropped by the queue policy on this connection. */
    std::uint64_t droppedMessages = 0;
};

/** Counters since start(), for metrics and tests. */
struct NetworkStats {
    std::uint64_t messagesReceived = 0;
    std::uint64_t framesRejected = 0;    // oversized, malformed or out-of-protocol frames
    std::uint64_t handshakesFailed = 0;  // connections closed before their peer was up
    std::uint64_t messagesDropped = 0;   // by the send-queue policy
    std::uint64_t slowPeersDropped = 0;  // queue overflow or write timeout
    std::uint64_t bans = 0;
    std::uint64_t readsThrottled = 0;    // pauses of a peer past its inbound budget
    std::size_t inboundBufferBytes = 0;  // held by the read buffers now
};

}  // namespace gridledger::p2p
