#include "metrics.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace gridledger::node {

class MetricsImpl {
  public:
    MetricsImpl(const std::string& bindAddress, std::uint16_t port)
        : registry(std::make_shared<prometheus::Registry>()),
          address(bindAddress),
          exposer(std::make_unique<prometheus::Exposer>(bindAddress + ":" + std::to_string(port))),
          executedHeight(gauge("gridledger_executed_height", "Height of the last executed block")),
          round(gauge("gridledger_consensus_round", "Consensus round this validator is in")),
          highestQcRound(gauge("gridledger_consensus_highest_qc_round",
                               "Round of the highest quorum certificate held")),
          chainFsyncs(gauge("gridledger_chain_fsyncs_total",
                            "Fsyncs of the chain database's write-ahead log")),
          timeouts(counter("gridledger_consensus_timeouts_total",
                           "Rounds this validator timed out (signed a timeout for)")),
          mempoolTxs(gauge("gridledger_mempool_txs", "Transactions in the mempool")),
          mempoolBytes(gauge("gridledger_mempool_bytes", "Bytes of transactions in the mempool")),
          txSignaturesVerified(
              gauge("gridledger_tx_signatures_verified_total",
                    "Transaction signatures this node verified (admission, gossip, blocks)")),
          batchesMade(gauge("gridledger_batches_made_total",
                            "Batches of its transactions this member sent to the others")),
          batchesCertified(gauge("gridledger_batches_certified_total",
                                 "Batches of this member certified by f + 1 members")),
          batchesAdmittedCertified(
              gauge("gridledger_batches_admitted_certified_total",
                    "Other members' batches admitted on their certificate, not verified here")),
          batchesVerifiedHere(gauge("gridledger_batches_verified_here_total",
                                    "Other members' batches verified here: asked to sign, or no "
                                    "certificate within 1 s")),
          committedTxs(counter("gridledger_committed_txs_total",
                               "Transactions committed in executed blocks")),
          failedTxs(counter("gridledger_failed_txs_total",
                            "Committed transactions whose receipt is a failure")),
          blocks(counter("gridledger_committed_blocks_total", "Blocks committed and executed")),
          peers(gauge("gridledger_p2p_peers", "Peers connected now")),
          messagesReceived(gauge("gridledger_p2p_messages_received_total",
                                 "Application messages received from peers")),
          framesRejected(gauge("gridledger_p2p_frames_rejected_total",
                               "Oversized, malformed or out-of-protocol frames from peers")),
          handshakesFailed(gauge("gridledger_p2p_handshakes_failed_total",
                                 "Connections closed before their peer was up (refused, failed)")),
          messagesDropped(gauge("gridledger_p2p_messages_dropped_total",
                                "Messages dropped by the send-queue policy")),
          slowPeersDropped(gauge("gridledger_p2p_slow_peers_dropped_total",
                                 "Peers disconnected for not reading their messages")),
          bans(gauge("gridledger_p2p_bans_total", "Peers banned for misbehaviour")),
          halted(gauge("gridledger_node_halted",
                       "1 after the node found its state differ from a certified root")),
          signingHeld(
              gauge("gridledger_node_signing_held", "1 while this validator holds its signatures")),
          syncing(gauge("gridledger_node_syncing", "1 while block sync executes blocks")),
          rejectedMessages(counter("gridledger_p2p_invalid_messages_total",
                                   "Peer messages that failed decoding or signature checks")),
          servingRefused(counter("gridledger_p2p_serving_refused_total",
                                 "Peer requests refused: the peer used up its serving budget")),
          peerWorkDropped(counter("gridledger_p2p_work_dropped_total",
                                  "Peer messages dropped: the peer-work queue was full")),
          readsThrottled(gauge("gridledger_p2p_reads_throttled_total",
                               "Pauses in reading a peer past its inbound budget")),
          inboundBufferBytes(gauge("gridledger_p2p_inbound_buffer_bytes",
                                   "Bytes held by the read buffers of all connections")),
          syncedBlocks(counter("gridledger_synced_blocks_total",
                               "Committed blocks fetched by block sync and executed")),
          execution(prometheus::BuildHistogram()
                        .Name("gridledger_block_execution_seconds")
                        .Help("Time to execute and commit one block")
                        .Register(*registry)
                        .Add({}, prometheus::Histogram::BucketBoundaries{0.001, 0.005, 0.01, 0.05,
                                                                         0.1, 0.5, 1.0})) {
        exposer->RegisterCollectable(registry);
    }

    MetricsImpl(const MetricsImpl&) = delete;
    MetricsImpl& operator=(const MetricsImpl&) = delete;

    /**
     * Stops the exposer. Its listening thread looks at its stop flag only between polls of the
     * listening socket, each up to 2 s long, so a node would take 2 s to stop on this alone. A
     * connection to the port ends the poll: one is made every 5 ms until the exposer is gone.
     */
    ~MetricsImpl() {
        const boost::asio::ip::tcp::endpoint endpoint(wakeAddress(), port());
        std::atomic<bool> stopped{false};
        std::thread waker([&endpoint, &stopped] {
            boost::asio::io_context io;
            while (!stopped.load()) {
                // Each attempt gives up after 5 ms, so that a port that drops connections
                // (a firewall rule) cannot hold up the stop.
                boost::asio::ip::tcp::socket socket(io);
                socket.async_connect(endpoint, [](const boost::system::error_code&) {});
                io.run_for(std::chrono::milliseconds(5));
                boost::system::error_code ignored;
                socket.close(ignored);
                io.run();  // the cancelled attempt's handler
                io.restart();
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        });
        exposer.reset();
        stopped.store(true);
        waker.join();
    }

    [[nodiscard]] std::uint16_t port() const {
        const auto ports = exposer->GetListeningPorts();
        return ports.empty() ? 0 : static_cast<std::uint16_t>(ports.front());
    }

    prometheus::Gauge& gauge(const std::string& name, const std::string& help) {
        return prometheus::BuildGauge().Name(name).Help(help).Register(*registry).Add({});
    }
    prometheus::Counter& counter(const std::string& name, const std::string& help) {
        return prometheus::BuildCounter().Name(name).Help(help).Register(*registry).Add({});
    }

    /** The bound address, or the loopback address of its family for a wildcard one. */
    [[nodiscard]] boost::asio::ip::address wakeAddress() const {
        boost::system::error_code error;
        auto bound = boost::asio::ip::make_address(address, error);
        if (error || bound.is_unspecified()) {
            return bound.is_v6()
                       ? boost::asio::ip::address(boost::asio::ip::address_v6::loopback())
                       : boost::asio::ip::address(boost::asio::ip::address_v4::loopback());
        }
        return bound;
    }

    // The registry outlives the exposer: the destructor stops the exposer, joining its workers,
    // before the members, the registry they scrape among them, are released.
    std::shared_ptr<prometheus::Registry> registry;
    std::string address;
    std::unique_ptr<prometheus::Exposer> exposer;
    prometheus::Gauge& executedHeight;
    prometheus::Gauge& round;
    prometheus::Gauge& highestQcRound;
    prometheus::Gauge& chainFsyncs;
    prometheus::Counter& timeouts;
    // The (epoch, round) of the last timeout counted; rounds start again at 1 in each epoch.
    std::pair<std::uint64_t, std::uint64_t> lastTimedOut{0, 0};
    prometheus::Gauge& mempoolTxs;
    prometheus::Gauge& mempoolBytes;
    prometheus::Gauge& txSignaturesVerified;
    prometheus::Gauge& batchesMade;
    prometheus::Gauge& batchesCertified;
    prometheus::Gauge& batchesAdmittedCertified;
    prometheus::Gauge& batchesVerifiedHere;
    prometheus::Counter& committedTxs;
    prometheus::Counter& failedTxs;
    prometheus::Counter& blocks;
    prometheus::Gauge& peers;
    prometheus::Gauge& messagesReceived;
    prometheus::Gauge& framesRejected;
    prometheus::Gauge& handshakesFailed;
    prometheus::Gauge& messagesDropped;
    prometheus::Gauge& slowPeersDropped;
    prometheus::Gauge& bans;
    prometheus::Gauge& halted;
    prometheus::Gauge& signingHeld;
    prometheus::Gauge& syncing;
    prometheus::Counter& rejectedMessages;
    prometheus::Counter& servingRefused;
    prometheus::Counter& peerWorkDropped;
    prometheus::Gauge& readsThrottled;
    prometheus::Gauge& inboundBufferBytes;
    prometheus::Counter& syncedBlocks;
    prometheus::Histogram& execution;
};

Result<std::unique_ptr<Metrics>> Metrics::start(const std::string& address, std::uint16_t port) {
    try {
        auto impl = std::make_unique<MetricsImpl>(address, port);
        return std::unique_ptr<Metrics>(new Metrics(std::move(impl)));
    } catch (const std::exception& e) {
        return fail(ErrorCode::kIo, "cannot serve metrics on " + address + ":" +
                                        std::to_string(port) + ": " + e.what());
    }
}

Metrics::Metrics(std::unique_ptr<MetricsImpl> impl) : impl_(std::move(impl)) {}
Metrics::~Metrics() = default;

std::uint16_t Metrics::port() const {
    return impl_->port();
}

void Metrics::blockCommitted(std::uint64_t height, std::size_t txs, std::size_t failedTxs,
                             double executionSeconds) {
    impl_->executedHeight.Set(static_cast<double>(height));
    impl_->committedTxs.Increment(static_cast<double>(txs));
    impl_->failedTxs.Increment(static_cast<double>(failedTxs));
    impl_->blocks.Increment();
    impl_->execution.Observe(executionSeconds);
}

void Metrics::consensusState(std::uint64_t round, std::uint64_t highestQcRound,
                             std::uint64_t chainFsyncs) {
    impl_->chainFsyncs.Set(static_cast<double>(chainFsyncs));
    impl_->round.Set(static_cast<double>(round));
    impl_->highestQcRound.Set(static_cast<double>(highestQcRound));
}

void Metrics::roundTimedOut(std::uint64_t epoch, std::uint64_t round) {
    const std::pair<std::uint64_t, std::uint64_t> timedOut{epoch, round};
    if (timedOut > impl_->lastTimedOut) {
        impl_->lastTimedOut = timedOut;
        impl_->timeouts.Increment();
    }
}

void Metrics::mempool(std::size_t txs, std::size_t bytes, std::uint64_t signaturesVerified) {
    impl_->mempoolTxs.Set(static_cast<double>(txs));
    impl_->mempoolBytes.Set(static_cast<double>(bytes));
    impl_->txSignaturesVerified.Set(static_cast<double>(signaturesVerified));
}

void Metrics::batches(std::uint64_t made, std::uint64_t certified, std::uint64_t admittedCertified,
                      std::uint64_t verifiedHere) {
    impl_->batchesMade.Set(static_cast<double>(made));
    impl_->batchesCertified.Set(static_cast<double>(certified));
    impl_->batchesAdmittedCertified.Set(static_cast<double>(admittedCertified));
    impl_->batchesVerifiedHere.Set(static_cast<double>(verifiedHere));
}

}  // namespace gridledger::node

namespace gridledger::node {

void Metrics::network(const p2p::NetworkStats& stats, std::size_t peers) {
    const auto set = [](prometheus::Gauge& gauge, std::uint64_t value) {
        gauge.Set(static_cast<double>(value));
    };
    set(impl_->peers, peers);
    set(impl_->messagesReceived, stats.messagesReceived);
    set(impl_->framesRejected, stats.framesRejected);
    set(impl_->handshakesFailed, stats.handshakesFailed);
    set(impl_->messagesDropped, stats.messagesDropped);
    set(impl_->slowPeersDropped, stats.slowPeersDropped);
    set(impl_->bans, stats.bans);
    set(impl_->readsThrottled, stats.readsThrottled);
    set(impl_->inboundBufferBytes, stats.inboundBufferBytes);
}

void Metrics::nodeState(bool halted, bool signingHeld, bool syncing) {
    impl_->halted.Set(halted ? 1.0 : 0.0);
    impl_->signingHeld.Set(signingHeld ? 1.0 : 0.0);
    impl_->syncing.Set(syncing ? 1.0 : 0.0);
}

void Metrics::invalidMessage() {
    impl_->rejectedMessages.Increment();
}

void Metrics::servingRefused() {
    impl_->servingRefused.Increment();
}

void Metrics::peerWorkDropped() {
    impl_->peerWorkDropped.Increment();
}

void Metrics::blocksSynced(std::size_t blocks) {
    impl_->syncedBlocks.Increment(static_cast<double>(blocks));
}

}  // namespace gridledger::node
