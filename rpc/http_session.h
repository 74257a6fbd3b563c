#pragma once

// Private to the rpc module: one HTTP/1.1 client connection of the JSON-RPC server.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <gridledger/rpc/dispatcher.h>
#include <gridledger/rpc/errors.h>
#include <gridledger/rpc/limits.h>
#include <gridledger/rpc/method_table.h>
#include <gridledger/rpc/server.h>
#include <gridledger/rpc/subscriptions.h>

namespace gridledger::rpc::detail {

class HttpSession;
class WsSession;

/**
 * What the listener and every session share: the dispatcher, the limits and the registry of open
 * sessions (for the connection limit and for stop()). Held by shared_ptr, so it outlives them all.
 */
class ServerState {
  public:
    ServerState(MethodTable methods, const ServerOptions& options);

    [[nodiscard]] const Dispatcher& dispatcher() const { return dispatcher_; }
    [[nodiscard]] const ServerLimits& limits() const { return limits_; }
    [[nodiscard]] const AccessPolicy& access() const { return access_; }
    /** The address the listener is bound to (a Host naming it is the local machine). */
    [[nodiscard]] const std::string& listenAddress() const { return listenAddress_; }
    /** Admits the transactions of a `POST /txs` body and settles them (ServerOptions). */
    [[nodiscard]] bool servesRaw() const { return static_cast<bool>(submitRaw_); }
    [[nodiscard]] std::vector<Result<Hash256>> submitRaw(std::span<const ByteView> raws) const {
        return submitRaw_(raws);
    }
    [[nodiscard]] Status settle() const { return settle_ ? settle_() : Status{}; }
    /**
     * The canonical ServerOptions::explorerDir, served under `/explorer/`; empty when none is
     * configured, or when it is not a directory (start() then fails).
     */
    [[nodiscard]] const std::filesystem::path& explorerRoot() const { return explorerRoot_; }
    /** Why the node is not ready (ServerOptions::readiness), nullopt when it is. */
    [[nodiscard]] std::optional<std::string> notReady() const {
        return readiness_ ? readiness_() : std::nullopt;
    }

    /**
     * Registers a new session. At the connection limit it makes room by closing the session that
     * has waited longest for a request head (an idle keep-alive connection, or one that never
     * sent a request), so idle connections cannot lock clients out. False when the server stops,
     * or when the limit is reached and no session is idle (every one is in a request).
     */
    [[nodiscard]] bool admit(const std::shared_ptr<HttpSession>& session);
    /** Forgets a session (called by its destructor). */
    void release(const HttpSession* session);
    /**
     * Registers a WebSocket session; false when the server stops or ServerLimits::maxWsConnections
     * are open already.
     */
    [[nodiscard]] bool admitWs(const std::shared_ptr<WsSession>& session);
    /** True when a new WebSocket session would be refused by admitWs right now. */
    [[nodiscard]] bool wsFull() const;
    /** Forgets a WebSocket session (called by its destructor). */
    void releaseWs(const WsSession* session);
    /** Hands the notifications of executed blocks to every WebSocket session; never blocks. */
    void publish(std::vector<Notification> notifications);
    /** A number for a new subscription id, unique in this server. */
    [[nodiscard]] std::uint64_t nextSubscriptionNumber() { return ++subscriptionNumber_; }
    /** Counts a WebSocket client dropped because it did not read its messages. */
    void countSlowClientDropped() { ++slowClientsDropped_; }
    [[nodiscard]] std::uint64_t slowClientsDropped() const { return slowClientsDropped_.load(); }
    /** Refuses further sessions from now on and returns those still open. */
    [[nodiscard]] std::vector<std::shared_ptr<HttpSession>> beginStop();
    /** The WebSocket sessions still open. */
    [[nodiscard]] std::vector<std::shared_ptr<WsSession>> openWebSockets() const;
    /** Waits until every session is gone or `deadline` passes; true when none is left. */
    [[nodiscard]] bool waitUntilEmpty(std::chrono::steady_clock::time_point deadline);
    /** The number of open sessions, HTTP and WebSocket. */
    [[nodiscard]] std::size_t size() const;
    /** The number of HTTP sessions waiting for a request head: the ones admit may evict. */
    [[nodiscard]] std::size_t idleSize() const;
    /** The number of open WebSocket sessions. */
    [[nodiscard]] std::size_t wsSize() const;

  private:
    Dispatcher dispatcher_;
    ServerLimits limits_;
    std::function<std::optional<std::string>()> readiness_;
    std::function<std::vector<Result<Hash256>>(std::span<const ByteView>)> submitRaw_;
    std::function<Status()> settle_;
    AccessPolicy access_;
    std::string listenAddress_;
    std::filesystem::path explorerRoot_;
    mutable std::mutex mutex_;
    std::condition_variable empty_;
    std::unordered_map<const HttpSession*, std::weak_ptr<HttpSession>> sessions_;
    std::unordered_map<const WsSession*, std::weak_ptr<WsSession>> wsSessions_;
    bool stopping_ = false;
    std::atomic<std::uint64_t> subscriptionNumber_{0};
    std::atomic<std::uint64_t> slowClientsDropped_{0};
};

/**
 * One client connection: reads a request, answers it, and loops while keep-alive holds. All its
 * work runs on the strand of its socket, so it needs no lock. It lives as long as an asynchronous
 * operation holds it; close() ends it from any thread.
 */
class HttpSession : public std::enable_shared_from_this<HttpSession> {
  public:
    using Request = boost::beast::http::request<boost::beast::http::string_body>;
    using Response = boost::beast::http::response<boost::beast::http::string_body>;

    HttpSession(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<ServerState> state);
    ~HttpSession();

    HttpSession(const HttpSession&) = delete;
    HttpSession& operator=(const HttpSession&) = delete;

    /** Starts reading requests. */
    void start();
    /** Closes the connection from any thread; pending operations end with an error. */
    void close();
    /**
     * Since when the session has waited for a request head (steady clock ticks), or kBusy while
     * it reads, answers or closes. Read from any thread.
     */
    [[nodiscard]] std::int64_t idleSince() const { return idleSince_.load(); }
    static constexpr std::int64_t kBusy = -1;

  private:
    /** What to do with the connection once a response is written. */
    enum class After { kReadNext, kClose, kLingerClose };

    void readHeader();
    void onHeader(boost::beast::error_code ec);
    /** Answers and ends a request the access policy refuses; false when it is admitted. */
    [[nodiscard]] bool refuseByAccess();
    void readBody();
    void onBody(boost::beast::error_code ec);
    void onReadError(boost::beast::error_code ec);
    void handleRequest(Request&& request);
    void handOffUpgrade(Request&& request);
    void submitRawTxs(const Request& request, After after);
    void serveExplorer(const Request& request, std::string_view path, After after);
    void respondError(boost::beast::http::status status, const RpcError& error, After after,
                      std::string_view allow = {});
    void respond(Response&& response, After after);
    void onWrite(boost::beast::error_code ec, After after);
    void lingerThenClose();
    void drainSome();
    void doClose();

    boost::beast::tcp_stream stream_;
    boost::beast::flat_buffer buffer_;
    std::shared_ptr<ServerState> state_;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    boost::beast::http::response<boost::beast::http::empty_body> continue_;
    Response response_;
    unsigned httpVersion_ = 11;
    std::vector<char> drain_;
    std::size_t drained_ = 0;
    bool closed_ = false;
    std::atomic<std::int64_t> idleSince_{kBusy};
};

}  // namespace gridledger::rpc::detail
