#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <exception>
#include <iterator>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gridledger/rpc/server.h>

#include "http_session.h"
#include "ws_session.h"

namespace gridledger::rpc {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

/** Pause before accepting again after an accept error such as running out of descriptors. */
constexpr std::chrono::milliseconds kAcceptRetryDelay{50};
/** How long stop() lets open connections wind down before it abandons their operations. */
constexpr std::chrono::seconds kStopGrace{5};
/** The highest niceness Linux gives a thread. */
constexpr int kMaxNice = 19;

}  // namespace

/**
 * The running server: an io_context driven by the I/O threads, one acceptor on its own strand,
 * and the ServerState shared with the sessions.
 */
class Server::Impl {
  public:
    Impl(MethodTable methods, ServerOptions options)
        : options_(std::move(options)),
          state_(std::make_shared<detail::ServerState>(std::move(methods), options_)),
          io_(static_cast<int>(std::max<std::size_t>(options_.ioThreads, 1))),
          acceptor_(net::make_strand(io_)),
          retryTimer_(acceptor_.get_executor()),
          feedStrand_(net::make_strand(io_)),
          feedTimer_(feedStrand_),
          work_(net::make_work_guard(io_)) {}

    ~Impl() { stop(); }

    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;

    Status start() {
        const std::lock_guard lock(lifecycle_);
        if (started_) {
            return fail(ErrorCode::kInvalidArgument, "the RPC server was already started");
        }
        started_ = true;
        GL_TRY(checkOptions());
        GL_TRY(listen());
        try {
            accept();
            threads_.reserve(options_.ioThreads);
            for (std::size_t i = 0; i < options_.ioThreads; ++i) {
                threads_.emplace_back([this] { runIo(); });
            }
        } catch (const std::exception& e) {
            stopLocked();
            return fail(ErrorCode::kInternal, std::string("cannot start RPC threads: ") + e.what());
        }
        return {};
    }

    void stop() {
        const std::lock_guard lock(lifecycle_);
        stopLocked();
    }

    [[nodiscard]] std::uint16_t port() const { return port_.load(); }
    [[nodiscard]] std::size_t connectionCount() const { return state_->size(); }
    [[nodiscard]] std::size_t idleConnectionCount() const { return state_->idleSize(); }
    [[nodiscard]] std::size_t webSocketCount() const { return state_->wsSize(); }
    [[nodiscard]] std::uint64_t slowClientsDropped() const { return state_->slowClientsDropped(); }

    void publishExecuted(std::uint64_t height) {
        if (!options_.feed) {
            return;
        }
        // One strand for the feed keeps the heights in order from here to every session.
        net::post(feedStrand_, [this, height] {
            if (state_->wsSize() == 0) {
                return;  // nobody to tell
            }
            unsent_.push_back(height);
            if (feedTimerArmed_) {
                return;  // the fan-out already due takes this height too
            }
            const auto due = lastFanOut_ + options_.notifyInterval;
            if (std::chrono::steady_clock::now() >= due) {
                fanOut();
                return;
            }
            feedTimerArmed_ = true;
            feedTimer_.expires_at(due);
            feedTimer_.async_wait([this](boost::system::error_code ec) {
                feedTimerArmed_ = false;
                if (!ec) {
                    fanOut();
                }
            });
        });
    }

  private:
    /**
     * Sends the notifications of every height announced since the last fan-out, in the order
     * announced, to the sessions as one batch. Runs on the feed strand.
     */
    void fanOut() {
        lastFanOut_ = std::chrono::steady_clock::now();
        std::vector<std::uint64_t> heights;
        heights.swap(unsent_);
        if (state_->wsSize() == 0) {
            return;
        }
        std::vector<Notification> batch;
        for (const std::uint64_t height : heights) {
            auto notifications = options_.feed(height);
            if (notifications) {
                std::move(notifications->begin(), notifications->end(), std::back_inserter(batch));
            }
        }
        state_->publish(std::move(batch));
    }

    Status checkOptions() const {
        if (options_.ioThreads == 0) {
            return fail(ErrorCode::kConfig, "rpc: ioThreads must be at least 1");
        }
        if (options_.notifyInterval < std::chrono::milliseconds::zero()) {
            return fail(ErrorCode::kConfig, "rpc: notifyInterval must not be negative");
        }
        if (options_.ioNice < 0 || options_.ioNice > kMaxNice) {
            return fail(ErrorCode::kConfig, "rpc: ioNice must be 0.." + std::to_string(kMaxNice));
        }
        const ServerLimits& limits = options_.limits;
        if (limits.maxConnections == 0 || limits.maxBatchItems == 0 || limits.maxJsonDepth == 0 ||
            limits.maxBodyBytes == 0 || limits.maxHeaderBytes == 0 ||
            limits.maxWsConnections == 0 || limits.maxSubscriptions == 0 ||
            limits.maxSendBufferBytes == 0 || limits.maxResponseBytes == 0 ||
            limits.idleTimeout <= std::chrono::milliseconds::zero() ||
            limits.requestTimeout <= std::chrono::milliseconds::zero()) {
            return fail(ErrorCode::kConfig, "rpc: every limit must be positive");
        }
        if (!options_.explorerDir.empty() && state_->explorerRoot().empty()) {
            return fail(ErrorCode::kConfig, "rpc: the explorer directory " +
                                                options_.explorerDir.string() +
                                                " is not a directory");
        }
        return {};
    }

    Status listen() {
        boost::system::error_code ec;
        const net::ip::address address = net::ip::make_address(options_.address, ec);
        if (ec) {
            return fail(ErrorCode::kConfig, "rpc: invalid listen address \"" + options_.address +
                                                "\": " + ec.message());
        }
        const tcp::endpoint endpoint(address, options_.port);
        const std::string where = options_.address + ":" + std::to_string(options_.port);
        if (acceptor_.open(endpoint.protocol(), ec)) {
            return fail(ErrorCode::kIo,
                        "rpc: cannot open a socket for " + where + ": " + ec.message());
        }
        if (acceptor_.set_option(net::socket_base::reuse_address(true), ec) ||
            acceptor_.bind(endpoint, ec) ||
            acceptor_.listen(net::socket_base::max_listen_connections, ec)) {
            boost::system::error_code ignored;  // closing must not overwrite the cause
            acceptor_.close(ignored);
            return fail(ErrorCode::kIo, "rpc: cannot listen on " + where + ": " + ec.message());
        }
        const tcp::endpoint bound = acceptor_.local_endpoint(ec);
        if (ec) {
            boost::system::error_code ignored;
            acceptor_.close(ignored);
            return fail(ErrorCode::kIo, "rpc: cannot read the bound port: " + ec.message());
        }
        port_.store(bound.port());
        return {};
    }

    /** Arms one accept; runs on the acceptor's strand (or before the threads start). */
    void accept() {
        acceptor_.async_accept(net::make_strand(io_),
                               [this](boost::system::error_code ec, tcp::socket socket) {
                                   onAccept(ec, std::move(socket));
                               });
    }

    void onAccept(boost::system::error_code ec, tcp::socket socket) {
        if (ec == net::error::operation_aborted || !acceptor_.is_open()) {
            return;  // stop() closed the acceptor.
        }
        if (ec) {
            // E.g. out of file descriptors: back off briefly instead of spinning.
            retryTimer_.expires_after(kAcceptRetryDelay);
            retryTimer_.async_wait([this](boost::system::error_code timerEc) {
                if (!timerEc && acceptor_.is_open()) {
                    accept();
                }
            });
            return;
        }
        auto session = std::make_shared<detail::HttpSession>(std::move(socket), state_);
        if (state_->admit(session)) {
            session->start();
        }
        // A refused session (connection limit, or stopping) closes its socket as it is destroyed
        // here, without reading anything.
        accept();
    }

    void runIo() {
        if (options_.ioNice > 0) {
            // Per thread on Linux: this thread's niceness, not the process's. Raising it needs
            // no privilege; should it fail anyway, the thread serves at the process's priority.
            errno = 0;
            const int current = ::getpriority(PRIO_PROCESS, 0);
            if (errno == 0) {
                ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()),
                              std::min(current + options_.ioNice, kMaxNice));
            }
        }
        // Named once its niceness is set, so that a thread seen by its name already runs at it.
        ::pthread_setname_np(::pthread_self(), "gl-rpc");
        for (;;) {
            try {
                io_.run();
                return;
            } catch (...) {
                // Sessions catch their own errors; should anything still escape, keep serving.
            }
        }
    }

    void stopLocked() {
        if (!started_ || stopped_) {
            return;
        }
        stopped_ = true;
        std::vector<std::shared_ptr<detail::HttpSession>> open = state_->beginStop();
        net::post(acceptor_.get_executor(), [this] {
            boost::system::error_code ignored;
            acceptor_.close(ignored);
            retryTimer_.cancel();
        });
        net::post(feedStrand_, [this] { feedTimer_.cancel(); });
        for (const std::shared_ptr<detail::HttpSession>& session : open) {
            session->close();
        }
        open.clear();
        for (const std::shared_ptr<detail::WsSession>& session : state_->openWebSockets()) {
            session->close();
        }
        work_.reset();
        if (threads_.empty()) {
            // start() failed before any thread ran: close the acceptor here.
            io_.run();
        } else if (!state_->waitUntilEmpty(std::chrono::steady_clock::now() + kStopGrace)) {
            io_.stop();  // A handler is still busy after the grace period: abandon its I/O.
        }
        for (std::thread& thread : threads_) {
            thread.join();
        }
        threads_.clear();
    }

    ServerOptions options_;
    std::shared_ptr<detail::ServerState> state_;
    net::io_context io_;
    tcp::acceptor acceptor_;
    net::steady_timer retryTimer_;
    net::strand<net::io_context::executor_type> feedStrand_;
    // The feed's state, touched only on feedStrand_.
    net::steady_timer feedTimer_;
    bool feedTimerArmed_ = false;
    /** Heights announced and not yet fanned out, in the order announced. */
    std::vector<std::uint64_t> unsent_;
    std::chrono::steady_clock::time_point lastFanOut_{};
    net::executor_work_guard<net::io_context::executor_type> work_;
    std::vector<std::thread> threads_;
    std::atomic<std::uint16_t> port_{0};
    std::mutex lifecycle_;
    bool started_ = false;
    bool stopped_ = false;
};

Server::Server(MethodTable methods, ServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(methods), std::move(options))) {}

Server::~Server() = default;

Status Server::start() {
    return impl_->start();
}

void Server::stop() {
    impl_->stop();
}

std::uint16_t Server::port() const {
    return impl_->port();
}

std::size_t Server::connectionCount() const {
    return impl_->connectionCount();
}

std::size_t Server::idleConnectionCount() const {
    return impl_->idleConnectionCount();
}

std::size_t Server::webSocketCount() const {
    return impl_->webSocketCount();
}

std::uint64_t Server::slowClientsDropped() const {
    return impl_->slowClientsDropped();
}

void Server::publishExecuted(std::uint64_t height) {
    impl_->publishExecuted(height);
}

}  // namespace gridledger::rpc
