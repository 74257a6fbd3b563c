#include "http_session.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/beast/http/write.hpp>

#include <gridledger/crypto/sha256.h>
#include <gridledger/rpc/static_files.h>

#include "ws_session.h"

namespace gridledger::rpc::detail {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr std::string_view kServerName = "gridledger";
constexpr std::string_view kJsonContentType = "application/json";
constexpr std::string_view kOctetStreamContentType = "application/octet-stream";
/** The most transactions one `POST /txs` body may carry. */
constexpr std::size_t kMaxRawTxs = 10'000;
/** After an error response on a request that was not read to its end (e.g. a body over the
 * limit), the server reads and discards what the client still sends for at most this long, so
 * that closing the socket does not reset the connection before the client reads the response. */
constexpr std::chrono::milliseconds kLingerTime{2'000};
constexpr std::size_t kDrainChunk = std::size_t{16} * 1024;
/**
 * Beast reads a body in pieces of the read buffer's free room, at least 512 bytes: a buffer sized
 * for the header takes an 88 KB `POST /txs` body in about 140 reads. A body is read with room for
 * up to this much at a time, and the room goes once the body is read, so that an idle
 * connection holds no more than its header needs.
 */
constexpr std::size_t kBodyReadRoom = std::size_t{64} * 1024;
/** Where ServerOptions::explorerDir is served; `/explorer` alone redirects here. */
constexpr std::string_view kExplorerPrefix = "/explorer/";
/**
 * What the explorer's pages may load and reach: their own files, and the node that serves them
 * (fetch and WebSocket); nothing else, and no framing by another site.
 */
constexpr std::string_view kExplorerPolicy =
    "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' "
    "'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
/** Longest Host or Origin value echoed back in a refusal. */
constexpr std::size_t kMaxEchoed = 128;

/**
 * A header value as a refusal echoes it: at most kMaxEchoed characters, each byte outside
 * printable ASCII shown as '?', so that the answer stays valid UTF-8 whatever the client sent.
 */
std::string echoed(std::string_view value) {
    std::string out(value.substr(0, kMaxEchoed));
    for (char& c : out) {
        if (c < ' ' || c > '~') {
            c = '?';
        }
    }
    return out;
}

/** The path of a request target, without its query string. */
std::string_view pathOf(beast::string_view target) {
    const std::string_view text(target.data(), target.size());
    return text.substr(0, text.find('?'));
}

/** Whether a Content-Type header names `expected`, in any letter case, parameters aside. */
bool hasContentType(beast::string_view value, std::string_view expected) {
    std::string_view text(value.data(), value.size());
    text = text.substr(0, text.find(';'));
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
        text.remove_suffix(1);
    }
    return beast::iequals(beast::string_view(text.data(), text.size()),
                          beast::string_view(expected.data(), expected.size()));
}

/** `application/json`, optionally with parameters such as a charset. */
bool isJsonContentType(beast::string_view value) {
    return hasContentType(value, kJsonContentType);
}

/**
 * The transactions of a `POST /txs` body, each after its 4-byte big-endian length; kMalformed
 * on a truncated frame, an empty one, or more than kMaxRawTxs frames.
 */
Result<std::vector<ByteView>> splitTxFrames(ByteView body) {
    std::vector<ByteView> frames;
    std::size_t at = 0;
    while (at < body.size()) {
        if (frames.size() == kMaxRawTxs) {
            return fail(ErrorCode::kMalformed,
                        "more than " + std::to_string(kMaxRawTxs) + " transactions in one body");
        }
        if (body.size() - at < 4) {
            return fail(ErrorCode::kMalformed, "truncated length at byte " + std::to_string(at));
        }
        const std::size_t length = readU32(body.subspan(at));
        at += 4;
        if (length == 0 || length > body.size() - at) {
            return fail(ErrorCode::kMalformed, "transaction " + std::to_string(frames.size()) +
                                                   ": length " + std::to_string(length) +
                                                   " does not fit the body");
        }
        frames.push_back(body.subspan(at, length));
        at += length;
    }
    return frames;
}

bool isWebSocketUpgrade(const HttpSession::Request& request) {
    return request.method() == http::verb::get &&
           beast::iequals(request[http::field::upgrade], "websocket");
}

bool isHttpError(const beast::error_code& ec) {
    return ec.category() == beast::error_code(http::error::bad_target).category();
}

/** The canonical form of `dir` when it is a directory, else empty (also when `dir` is). */
std::filesystem::path canonicalDirectory(const std::filesystem::path& dir) {
    std::error_code ec;
    if (dir.empty() || !std::filesystem::is_directory(dir, ec)) {
        return {};
    }
    std::filesystem::path canonical = std::filesystem::canonical(dir, ec);
    return ec ? std::filesystem::path() : canonical;
}

std::uint32_t headerLimit(std::size_t bytes) {
    return static_cast<std::uint32_t>(
        std::min<std::size_t>(bytes, std::numeric_limits<std::uint32_t>::max()));
}

}  // namespace

// ---- ServerState ----------------------------------------------------------------------------

ServerState::ServerState(MethodTable methods, const ServerOptions& options)
    : dispatcher_(std::move(methods), options.limits, options.adminOnlyMethods, options.settle),
      limits_(options.limits),
      readiness_(options.readiness),
      submitRaw_(options.submitRaw),
      settle_(options.settle),
      access_(options.access),
      listenAddress_(options.address),
      explorerRoot_(canonicalDirectory(options.explorerDir)) {}

bool ServerState::admit(const std::shared_ptr<HttpSession>& session) {
    std::shared_ptr<HttpSession> evicted;
    {
        const std::lock_guard lock(mutex_);
        if (stopping_) {
            return false;
        }
        if (sessions_.size() >= limits_.maxConnections) {
            auto oldest = sessions_.end();
            std::int64_t oldestSince = 0;
            for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
                const std::int64_t since = it->first->idleSince();
                if (since != HttpSession::kBusy &&
                    (oldest == sessions_.end() || since < oldestSince)) {
                    oldest = it;
                    oldestSince = since;
                }
            }
            if (oldest == sessions_.end()) {
                return false;
            }
            // It no longer counts against the limit: it closes as soon as its strand runs.
            evicted = oldest->second.lock();
            sessions_.erase(oldest);
        }
        sessions_.emplace(session.get(), session);
    }
    if (evicted) {
        evicted->close();
    }
    return true;
}

void ServerState::release(const HttpSession* session) {
    const std::lock_guard lock(mutex_);
    sessions_.erase(session);
    if (sessions_.empty() && wsSessions_.empty()) {
        empty_.notify_all();
    }
}

bool ServerState::admitWs(const std::shared_ptr<WsSession>& session) {
    const std::lock_guard lock(mutex_);
    if (stopping_ || wsSessions_.size() >= limits_.maxWsConnections) {
        return false;
    }
    wsSessions_.emplace(session.get(), session);
    return true;
}

bool ServerState::wsFull() const {
    const std::lock_guard lock(mutex_);
    return stopping_ || wsSessions_.size() >= limits_.maxWsConnections;
}

void ServerState::releaseWs(const WsSession* session) {
    const std::lock_guard lock(mutex_);
    wsSessions_.erase(session);
    if (sessions_.empty() && wsSessions_.empty()) {
        empty_.notify_all();
    }
}

void ServerState::publish(std::vector<Notification> notifications) {
    if (notifications.empty()) {
        return;
    }
    const auto shared = std::make_shared<const std::vector<Notification>>(std::move(notifications));
    for (const std::shared_ptr<WsSession>& session : openWebSockets()) {
        session->deliver(shared);
    }
}

std::vector<std::shared_ptr<WsSession>> ServerState::openWebSockets() const {
    const std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<WsSession>> open;
    open.reserve(wsSessions_.size());
    for (const auto& [key, weak] : wsSessions_) {
        if (std::shared_ptr<WsSession> session = weak.lock()) {
            open.push_back(std::move(session));
        }
    }
    return open;
}

std::vector<std::shared_ptr<HttpSession>> ServerState::beginStop() {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    std::vector<std::shared_ptr<HttpSession>> open;
    for (const auto& [key, weak] : sessions_) {
        if (std::shared_ptr<HttpSession> session = weak.lock()) {
            open.push_back(std::move(session));
        }
    }
    return open;
}

bool ServerState::waitUntilEmpty(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return empty_.wait_until(lock, deadline,
                             [this] { return sessions_.empty() && wsSessions_.empty(); });
}

std::size_t ServerState::size() const {
    const std::lock_guard lock(mutex_);
    return sessions_.size() + wsSessions_.size();
}

std::size_t ServerState::idleSize() const {
    const std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(std::count_if(
        sessions_.begin(), sessions_.end(),
        [](const auto& entry) { return entry.first->idleSince() != HttpSession::kBusy; }));
}

std::size_t ServerState::wsSize() const {
    const std::lock_guard lock(mutex_);
    return wsSessions_.size();
}

// ---- HttpSession: reading -------------------------------------------------------------------

HttpSession::HttpSession(tcp::socket&& socket, std::shared_ptr<ServerState> state)
    : stream_(std::move(socket)), state_(std::move(state)) {}

HttpSession::~HttpSession() {
    state_->release(this);
}

void HttpSession::start() {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&HttpSession::readHeader, shared_from_this()));
}

void HttpSession::close() {
    net::post(stream_.get_executor(),
              beast::bind_front_handler(&HttpSession::doClose, shared_from_this()));
}

void HttpSession::readHeader() {
    if (closed_) {
        return;
    }
    const ServerLimits& limits = state_->limits();
    parser_.emplace();
    parser_->header_limit(headerLimit(limits.maxHeaderBytes));
    parser_->body_limit(std::uint64_t{limits.maxBodyBytes});
    stream_.expires_after(limits.idleTimeout);
    idleSince_.store(std::chrono::steady_clock::now().time_since_epoch().count());
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onHeader(ec); });
}

void HttpSession::onHeader(beast::error_code ec) {
    idleSince_.store(kBusy);
    if (ec) {
        onReadError(ec);
        return;
    }
    httpVersion_ = parser_->get().version();
    if (refuseByAccess()) {
        return;
    }
    if (parser_->is_done()) {
        handleRequest(parser_->release());
        return;
    }
    if (!beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
        readBody();
        return;
    }
    // The client waits for a go-ahead before it sends the body (curl does for large bodies).
    continue_ = {};
    continue_.version(httpVersion_);
    continue_.result(http::status::continue_);
    http::async_write(stream_, continue_,
                      [self = shared_from_this()](beast::error_code writeEc, std::size_t) {
                          if (writeEc) {
                              self->doClose();
                              return;
                          }
                          self->readBody();
                      });
}

void HttpSession::readBody() {
    stream_.expires_after(state_->limits().requestTimeout);
    if (const auto length = parser_->content_length(); length && *length > buffer_.size()) {
        buffer_.reserve(buffer_.size() + static_cast<std::size_t>(std::min<std::uint64_t>(
                                             *length - buffer_.size(), kBodyReadRoom)));
    }
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onBody(ec); });
}

void HttpSession::onBody(beast::error_code ec) {
    if (ec) {
        onReadError(ec);
        return;
    }
    if (buffer_.capacity() > kBodyReadRoom / 2 && buffer_.size() == 0) {
        buffer_.shrink_to_fit();
    }
    handleRequest(parser_->release());
}

void HttpSession::onReadError(beast::error_code ec) {
    if (closed_ || ec == http::error::end_of_stream || ec == http::error::partial_message ||
        !isHttpError(ec)) {
        // The peer left, the idle timeout fired, or the server is stopping.
        doClose();
        return;
    }
    if (ec == http::error::body_limit) {
        respondError(http::status::payload_too_large,
                     RpcError{kLimitExceeded,
                              "request body exceeds " +
                                  std::to_string(state_->limits().maxBodyBytes) + " bytes",
                              std::string(reason::kBodyTooLarge)},
                     After::kLingerClose);
        return;
    }
    if (ec == http::error::header_limit) {
        respondError(http::status::request_header_fields_too_large,
                     RpcError{kLimitExceeded, "request header too large",
                              std::string(reason::kHeaderTooLarge)},
                     After::kLingerClose);
        return;
    }
    respondError(http::status::bad_request,
                 RpcError{kInvalidRequest, "malformed HTTP request: " + ec.message(),
                          std::string(reason::kBadHttp)},
                 After::kLingerClose);
}

// Checked on the head alone, so a refused client gets no body read, no method run and no
// WebSocket upgrade. The probes stay open: they tell nothing but whether the node runs.
bool HttpSession::refuseByAccess() {
    const auto& request = parser_->get();
    const std::string_view path = pathOf(request.target());
    if (request.method() == http::verb::get && (path == "/livez" || path == "/readyz") &&
        !isWebSocketUpgrade(request)) {
        return false;
    }
    const auto text = [&request](http::field field) {
        const beast::string_view value = request[field];
        return std::string_view(value.data(), value.size());
    };
    const AccessPolicy& access = state_->access();
    const After after = parser_->is_done() ? After::kClose : After::kLingerClose;
    if (!hostAllowed(text(http::field::host), access, state_->listenAddress())) {
        respondError(http::status::forbidden,
                     RpcError{kInvalidRequest,
                              "Host not allowed: " + echoed(text(http::field::host)) +
                                  " (rpc.allowed_hosts)",
                              std::string(reason::kForbiddenHost)},
                     after);
        return true;
    }
    if (!originAllowed(text(http::field::origin), access)) {
        respondError(http::status::forbidden,
                     RpcError{kInvalidRequest,
                              "Origin not allowed: " + echoed(text(http::field::origin)) +
                                  " (rpc.allowed_origins)",
                              std::string(reason::kForbiddenOrigin)},
                     after);
        return true;
    }
    if (!authorized(text(http::field::authorization), access)) {
        Response response{http::status::unauthorized, httpVersion_};
        response.set(http::field::content_type, kJsonContentType);
        response.set(http::field::www_authenticate, "Bearer");
        response.body() = errorResponseText(RpcError{kInvalidRequest,
                                                     "missing or wrong Authorization: Bearer token",
                                                     std::string(reason::kUnauthorized)});
        respond(std::move(response), after);
        return true;
    }
    return false;
}

// ---- HttpSession: routing -------------------------------------------------------------------

void HttpSession::handleRequest(Request&& request) {
    if (isWebSocketUpgrade(request)) {
        handOffUpgrade(std::move(request));
        return;
    }
    const After after = request.keep_alive() ? After::kReadNext : After::kClose;
    const std::string_view path = pathOf(request.target());
    if (path == "/livez" || path == "/readyz") {
        if (request.method() != http::verb::get) {
            respondError(http::status::method_not_allowed,
                         RpcError{kInvalidRequest, "use GET on " + std::string(path),
                                  std::string(reason::kHttpMethodNotAllowed)},
                         after, "GET");
            return;
        }
        const auto notReady = path == "/readyz" ? state_->notReady() : std::nullopt;
        Response response{notReady ? http::status::service_unavailable : http::status::ok,
                          httpVersion_};
        response.set(http::field::content_type, "text/plain");
        response.body() = notReady ? "not ready: " + *notReady + "\n"
                                   : std::string(path == "/livez" ? "ok\n" : "ready\n");
        respond(std::move(response), after);
        return;
    }
    if (!state_->explorerRoot().empty() &&
        (path == kExplorerPrefix.substr(0, kExplorerPrefix.size() - 1) ||
         path.starts_with(kExplorerPrefix))) {
        serveExplorer(request, path, after);
        return;
    }
    if (path == "/txs" && state_->servesRaw()) {
        submitRawTxs(request, after);
        return;
    }
    if (path != "/") {
        respondError(http::status::not_found,
                     RpcError{kInvalidRequest, "no such path; JSON-RPC is served on POST /",
                              std::string(reason::kPathNotFound)},
                     after);
        return;
    }
    if (request.method() != http::verb::post) {
        respondError(
            http::status::method_not_allowed,
            RpcError{kInvalidRequest, "use POST on /", std::string(reason::kHttpMethodNotAllowed)},
            after, "POST");
        return;
    }
    if (!isJsonContentType(request[http::field::content_type])) {
        respondError(http::status::unsupported_media_type,
                     RpcError{kInvalidRequest, "Content-Type must be application/json",
                              std::string(reason::kBadContentType)},
                     after);
        return;
    }
    std::optional<std::string> body = state_->dispatcher().handle(request.body());
    if (!body) {
        respond(Response{http::status::no_content, httpVersion_}, after);
        return;
    }
    Response response{http::status::ok, httpVersion_};
    response.set(http::field::content_type, kJsonContentType);
    response.body() = std::move(*body);
    respond(std::move(response), after);
}

// A `POST /txs` body: raw transactions, each after its 4-byte big-endian length. The answer holds
// one record per transaction, in order: its hash (32 bytes), the length of a reason (1 byte) and
// the reason token (ASCII), empty when the transaction was admitted (docs/rpc.md).
void HttpSession::submitRawTxs(const Request& request, After after) {
    if (request.method() != http::verb::post) {
        respondError(http::status::method_not_allowed,
                     RpcError{kInvalidRequest, "use POST on /txs",
                              std::string(reason::kHttpMethodNotAllowed)},
                     after, "POST");
        return;
    }
    if (!hasContentType(request[http::field::content_type], kOctetStreamContentType)) {
        respondError(http::status::unsupported_media_type,
                     RpcError{kInvalidRequest, "Content-Type must be application/octet-stream",
                              std::string(reason::kBadContentType)},
                     after);
        return;
    }
    const auto frames = splitTxFrames(asBytes(request.body()));
    if (!frames) {
        respondError(
            http::status::bad_request,
            RpcError{kInvalidParams, frames.error().message, std::string(reason::kBadTxFrame)},
            after);
        return;
    }
    const std::vector<Result<Hash256>> outcomes = state_->submitRaw(*frames);
    if (Status settled = state_->settle(); !settled) {
        respondError(http::status::internal_server_error,
                     RpcError{kInternalError,
                              "the answer could not be made durable: " + settled.error().message,
                              std::string(reason::kNotDurable)},
                     after);
        return;
    }
    std::string body;
    body.reserve(outcomes.size() * (Hash256::size() + 1));
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const Hash256 hash = outcomes[i] ? *outcomes[i] : crypto::sha256((*frames)[i]);
        body.append(reinterpret_cast<const char*>(hash.data()), Hash256::size());
        std::string_view token = outcomes[i] ? std::string_view() : outcomes[i].error().reason();
        token = token.substr(0, std::numeric_limits<std::uint8_t>::max());
        body.push_back(static_cast<char>(token.size()));
        body.append(token);
    }
    Response response{http::status::ok, httpVersion_};
    response.set(http::field::content_type, kOctetStreamContentType);
    response.body() = std::move(body);
    respond(std::move(response), after);
}

// The explorer's files (ServerOptions::explorerDir). Its pages use relative URLs, so the
// directory's own URL ends with '/': `/explorer` redirects there.
void HttpSession::serveExplorer(const Request& request, std::string_view path, After after) {
    if (request.method() != http::verb::get) {
        respondError(http::status::method_not_allowed,
                     RpcError{kInvalidRequest, "use GET on " + std::string(kExplorerPrefix),
                              std::string(reason::kHttpMethodNotAllowed)},
                     after, "GET");
        return;
    }
    if (!path.starts_with(kExplorerPrefix)) {
        Response response{http::status::moved_permanently, httpVersion_};
        response.set(http::field::location,
                     beast::string_view(kExplorerPrefix.data(), kExplorerPrefix.size()));
        respond(std::move(response), after);
        return;
    }
    auto file = readStaticFile(state_->explorerRoot(), path.substr(kExplorerPrefix.size()));
    if (!file) {
        const ErrorCode code = file.error().code;
        if (code == ErrorCode::kInvalidArgument) {
            respondError(http::status::bad_request,
                         RpcError{kInvalidRequest, "bad path: " + file.error().message,
                                  std::string(reason::kBadPath)},
                         after);
        } else if (code == ErrorCode::kNotFound) {
            respondError(http::status::not_found,
                         RpcError{kInvalidRequest, "no such file in the explorer",
                                  std::string(reason::kPathNotFound)},
                         after);
        } else {
            respondError(
                http::status::internal_server_error,
                RpcError{kInternalError, file.error().message, std::string(reason::kInternal)},
                after);
        }
        return;
    }
    Response response{http::status::ok, httpVersion_};
    response.set(http::field::content_type,
                 beast::string_view(file->contentType.data(), file->contentType.size()));
    // Revalidated on every load, so that a rebuilt explorer is picked up at once.
    response.set(http::field::cache_control, "no-cache");
    response.set("X-Content-Type-Options", "nosniff");
    response.set("Content-Security-Policy",
                 beast::string_view(kExplorerPolicy.data(), kExplorerPolicy.size()));
    response.body() = std::move(file->body);
    respond(std::move(response), after);
}

// An upgrade request arrives here complete, with the connection positioned right after it (a
// client sends no frame before the 101 answer). The WebSocket session takes over the socket.
void HttpSession::handOffUpgrade(Request&& request) {
    if (pathOf(request.target()) != "/ws") {
        respondError(http::status::not_found,
                     RpcError{kInvalidRequest, "WebSocket is served on /ws",
                              std::string(reason::kPathNotFound)},
                     After::kClose);
        return;
    }
    if (state_->wsFull()) {
        respondError(http::status::service_unavailable,
                     RpcError{kLimitExceeded,
                              "at most " + std::to_string(state_->limits().maxWsConnections) +
                                  " WebSocket connections are open",
                              std::string(reason::kTooManyWebSockets)},
                     After::kClose);
        return;
    }
    auto session = std::make_shared<WsSession>(stream_.release_socket(), state_);
    closed_ = true;  // The socket is the WebSocket session's now; this session ends here.
    if (state_->admitWs(session)) {
        session->start(std::move(request));
    }
    // Refused in a race with other upgrades or with stop(): the socket closes with `session`.
}

// ---- HttpSession: writing and closing -------------------------------------------------------

void HttpSession::respondError(http::status status, const RpcError& error, After after,
                               std::string_view allow) {
    Response response{status, httpVersion_};
    response.set(http::field::content_type, kJsonContentType);
    if (!allow.empty()) {
        response.set(http::field::allow, beast::string_view(allow.data(), allow.size()));
    }
    response.body() = errorResponseText(error);
    respond(std::move(response), after);
}

void HttpSession::respond(Response&& response, After after) {
    if (closed_) {
        return;
    }
    response_ = std::move(response);
    response_.set(http::field::server, kServerName);
    response_.keep_alive(after == After::kReadNext);
    response_.prepare_payload();
    stream_.expires_after(state_->limits().requestTimeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this(), after](beast::error_code ec, std::size_t) {
                          self->onWrite(ec, after);
                      });
}

void HttpSession::onWrite(beast::error_code ec, After after) {
    if (ec || closed_) {
        doClose();
        return;
    }
    switch (after) {
        case After::kReadNext:
            readHeader();
            return;
        case After::kClose:
            doClose();
            return;
        case After::kLingerClose:
            lingerThenClose();
            return;
    }
}

void HttpSession::lingerThenClose() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    drain_.resize(kDrainChunk);
    stream_.expires_after(std::min(kLingerTime, state_->limits().idleTimeout));
    drainSome();
}

void HttpSession::drainSome() {
    stream_.async_read_some(
        net::buffer(drain_), [self = shared_from_this()](beast::error_code ec, std::size_t bytes) {
            self->drained_ += bytes;
            if (ec || self->closed_ || self->drained_ >= self->state_->limits().maxBodyBytes) {
                self->doClose();
                return;
            }
            self->drainSome();
        });
}

void HttpSession::doClose() {
    if (closed_) {
        return;
    }
    closed_ = true;
    idleSince_.store(kBusy);
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
}

}  // namespace gridledger::rpc::detail
