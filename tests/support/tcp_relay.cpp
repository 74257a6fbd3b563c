#include "support/tcp_relay.h"

#include <array>
#include <atomic>
#include <list>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

namespace gridledger::testing {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

/** One relayed connection: the accepted client socket and the socket to the target. */
struct RelayLink : std::enable_shared_from_this<RelayLink> {
    RelayLink(asio::io_context& io, tcp::socket accepted)
        : client(std::move(accepted)), server(io), clientTimer(io), serverTimer(io) {}

    void close() {
        boost::system::error_code ignored;
        client.close(ignored);
        server.close(ignored);
    }

    tcp::socket client;
    tcp::socket server;
    asio::steady_timer clientTimer;
    asio::steady_timer serverTimer;
    std::array<std::uint8_t, 16384> fromClient{};
    std::array<std::uint8_t, 16384> fromServer{};
};

class TcpRelay::Impl : public std::enable_shared_from_this<Impl> {
  public:
    explicit Impl(std::uint16_t targetPort)
        : target_(asio::ip::make_address("127.0.0.1"), targetPort),
          acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {}

    void start() {
        accept();
        thread_ = std::thread([this] { io_.run(); });
    }

    void stop() {
        asio::post(io_, [this] {
            boost::system::error_code ignored;
            acceptor_.close(ignored);
            closeAll();
        });
        io_.stop();
        if (thread_.joinable()) {
            thread_.join();
        }
    }

    [[nodiscard]] std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

    void cut() {
        cut_ = true;
        asio::post(io_, [this] { closeAll(); });
    }
    void heal() { cut_ = false; }
    void setDelay(std::chrono::milliseconds delay) { delayMs_ = delay.count(); }
    [[nodiscard]] std::uint64_t connections() const { return connections_.load(); }

  private:
    void accept() {
        acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
            if (ec == asio::error::operation_aborted || !acceptor_.is_open()) {
                return;
            }
            if (!ec && !cut_) {
                relay(std::move(socket));
            }
            accept();  // a refused socket is closed as it goes out of scope
        });
    }

    void relay(tcp::socket socket) {
        auto link = std::make_shared<RelayLink>(io_, std::move(socket));
        links_.remove_if([](const std::weak_ptr<RelayLink>& weak) { return weak.expired(); });
        links_.push_back(link);
        ++connections_;
        link->server.async_connect(target_, [this, link](const boost::system::error_code& ec) {
            if (ec || cut_) {
                link->close();
                return;
            }
            pump(link, link->client, link->server, link->fromClient, link->clientTimer);
            pump(link, link->server, link->client, link->fromServer, link->serverTimer);
        });
    }

    /** Copies `from` to `to` chunk by chunk, each held for the delay; closes both on an error. */
    void pump(const std::shared_ptr<RelayLink>& link, tcp::socket& from, tcp::socket& to,
              std::array<std::uint8_t, 16384>& buffer, asio::steady_timer& timer) {
        from.async_read_some(
            asio::buffer(buffer), [this, link, &from, &to, &buffer, &timer](
                                      const boost::system::error_code& ec, std::size_t n) {
                if (ec) {
                    link->close();
                    return;
                }
                auto forward = [this, link, &from, &to, &buffer, &timer, n] {
                    asio::async_write(to, asio::buffer(buffer.data(), n),
                                      [this, link, &from, &to, &buffer, &timer](
                                          const boost::system::error_code& wec, std::size_t) {
                                          if (wec) {
                                              link->close();
                                              return;
                                          }
                                          pump(link, from, to, buffer, timer);
                                      });
                };
                const std::int64_t delay = delayMs_.load();
                if (delay == 0) {
                    forward();
                    return;
                }
                timer.expires_after(std::chrono::milliseconds(delay));
                timer.async_wait([link, forward](const boost::system::error_code& tec) {
                    if (tec) {
                        link->close();
                        return;
                    }
                    forward();
                });
            });
    }

    void closeAll() {
        for (auto& weak : links_) {
            if (auto link = weak.lock()) {
                link->close();
            }
        }
        links_.clear();
    }

    asio::io_context io_;
    tcp::endpoint target_;
    tcp::acceptor acceptor_;
    std::thread thread_;
    std::list<std::weak_ptr<RelayLink>> links_;  // io_ thread only
    std::atomic<bool> cut_{false};
    std::atomic<std::int64_t> delayMs_{0};
    std::atomic<std::uint64_t> connections_{0};
};

TcpRelay::TcpRelay(std::uint16_t targetPort) : impl_(std::make_shared<Impl>(targetPort)) {
    impl_->start();
}

TcpRelay::~TcpRelay() {
    impl_->stop();
}

std::uint16_t TcpRelay::port() const {
    return impl_->port();
}

void TcpRelay::cut() {
    impl_->cut();
}

void TcpRelay::heal() {
    impl_->heal();
}

void TcpRelay::setDelay(std::chrono::milliseconds delay) {
    impl_->setDelay(delay);
}

std::uint64_t TcpRelay::connections() const {
    return impl_->connections();
}

}  // namespace gridledger::testing
