#include "read_load.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string_view>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

#include <gridledger/base/amount.h>

#include "support/process.h"

namespace gridledger::bench {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

/** wrk's threads and connections: enough to keep the node's two RPC threads busy. */
constexpr int kWrkThreads = 2;
constexpr int kWrkConnections = 32;

/** A wrk latency figure ("411.00us", "3.25ms", "1.02s") in ms. */
double wrkMs(const std::string& value, const std::string& unit) {
    const double v = std::stod(value);
    return unit == "us" ? v / 1000 : unit == "s" ? v * 1000 : v;
}

/** The sum of every number that `pattern`'s first group matches in `text`; 0 when none. */
std::size_t countOf(const std::string& text, const std::regex& pattern) {
    std::size_t total = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) {
        for (std::size_t group = 1; group < it->size(); ++group) {
            total += std::stoul((*it)[group]);
        }
    }
    return total;
}

/** Milliseconds since the epoch on the system clock, the clock of the blocks' timestamps. */
double wallMs() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/** The value below which a fraction `q` of the sorted `values` lie. */
double quantile(const std::vector<double>& values, double q) {
    return values[std::min(values.size() - 1,
                           static_cast<std::size_t>(q * static_cast<double>(values.size())))];
}

}  // namespace

std::optional<WrkReport> runWrk(std::uint16_t port, std::uint64_t height,
                                const std::vector<std::string>& accounts, int seconds,
                                const std::string& log) {
    if (!std::filesystem::exists(GRIDLEDGER_WRK)) {
        std::cerr << "wrk not found (scripts/install-deps.sh installs it)\n";
        return std::nullopt;
    }
    std::vector<std::string> args{"-t" + std::to_string(kWrkThreads),
                                  "-c" + std::to_string(kWrkConnections),
                                  "-d" + std::to_string(seconds) + "s",
                                  "--latency",
                                  "-s",
                                  GRIDLEDGER_WRK_SCRIPT,
                                  "http://127.0.0.1:" + std::to_string(port) + "/",
                                  "--",
                                  std::to_string(height)};
    args.insert(args.end(), accounts.begin(), accounts.end());
    const int code = testing::runCommand(GRIDLEDGER_WRK, args, log);
    const std::string out = testing::readText(log);
    std::cout << out;
    std::smatch rate;
    std::smatch p50;
    std::smatch p99;
    std::smatch rpcErrors;
    const std::string unit = R"(([0-9.]+)(us|ms|s)\b)";
    if (code != 0 || !std::regex_search(out, rate, std::regex(R"(Requests/sec:\s+([0-9.]+))")) ||
        !std::regex_search(out, p50, std::regex(R"(\n\s+50%\s+)" + unit)) ||
        !std::regex_search(out, p99, std::regex(R"(\n\s+99%\s+)" + unit)) ||
        !std::regex_search(out, rpcErrors, std::regex(R"(rpc_errors=(\d+))"))) {
        std::cerr << "wrk failed: " << out << "\n";
        return std::nullopt;
    }
    return WrkReport{
        std::stod(rate[1]),
        wrkMs(p50[1], p50[2]),
        wrkMs(p99[1], p99[2]),
        countOf(out, std::regex(R"(Non-2xx or 3xx responses: (\d+))")),
        countOf(out, std::regex(R"(connect (\d+), read (\d+), write (\d+), timeout (\d+))")),
        std::stoul(rpcErrors[1])};
}

namespace {

// The subscribers' client shares the node's two cores and reads 1,000 notifications per head.
// Beast's WebSocket stream reads a socket at most 1,536 bytes at a time, about one notification
// per system call; this client reads each socket 64 KiB at a time after the handshake and splits
// the server's frames itself, so that a write carrying several heads costs one read. It takes the
// two numbers it needs from each notification's text, and parses one notification in
// kParsedEvery as JSON to check that they are the fields they should be.
constexpr std::string_view kNotificationStart =
    R"({"jsonrpc":"2.0","method":"chain_subscription","params":{"subscription":")";
constexpr std::string_view kHeightField = R"("result":{"height":")";
constexpr std::string_view kTimestampField = R"("timestamp_ms":")";
constexpr std::size_t kParsedEvery = 64;
constexpr std::size_t kReadBytes = std::size_t{64} << 10U;

/** The number in the JSON string that follows the first `field` of `text`. */
std::optional<std::uint64_t> stringField(std::string_view text, std::string_view field) {
    const std::size_t at = text.find(field);
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    const std::string_view rest = text.substr(at + field.size());
    const auto value = parseU64(rest.substr(0, rest.find('"')));
    return value ? std::optional(*value) : std::nullopt;
}

/** Throws unless `note` is a notification whose head has this height and timestamp. */
void checkFields(const json::value& note, std::uint64_t height, std::uint64_t timestamp) {
    const json::value& head = note.at("params").at("result");
    if (parseU64(head.at("height").as_string()) != height ||
        parseU64(head.at("header").at("timestamp_ms").as_string()) != timestamp) {
        throw std::runtime_error("a notification's height or timestamp was misread: " +
                                 json::serialize(note));
    }
}

/** One frame from the server (RFC 6455 §5.2): unmasked, so its payload is the bytes as sent. */
struct Frame {
    std::uint8_t opcode = 0;
    std::string_view payload;
};

constexpr std::uint8_t kOpText = 0x1;
constexpr std::uint8_t kOpClose = 0x8;
constexpr std::uint8_t kOpPing = 0x9;
constexpr std::uint8_t kOpPong = 0xA;

/**
 * The frame at `at` in `bytes`, advancing `at` past it, or nullopt when it has not all arrived.
 * Throws on what the server never sends: a fragment, a masked frame, an unknown opcode.
 */
std::optional<Frame> nextFrame(std::string_view bytes, std::size_t& at) {
    const std::string_view rest = bytes.substr(at);
    if (rest.size() < 2) {
        return std::nullopt;
    }
    const auto first = static_cast<std::uint8_t>(rest[0]);
    const auto second = static_cast<std::uint8_t>(rest[1]);
    const std::uint8_t opcode = first & 0x0FU;
    if ((first & 0x80U) == 0 || (second & 0x80U) != 0 ||
        (opcode != kOpText && opcode != kOpClose && opcode != kOpPing && opcode != kOpPong)) {
        throw std::runtime_error("a frame the server never sends: first bytes " +
                                 std::to_string(first) + " " + std::to_string(second));
    }
    std::size_t header = 2;
    std::uint64_t length = second & 0x7FU;
    const std::size_t extended = length == 126 ? 2 : length == 127 ? 8 : 0;
    if (rest.size() < header + extended) {
        return std::nullopt;
    }
    if (extended != 0) {
        length = 0;
        for (std::size_t i = 0; i < extended; ++i) {
            length = (length << 8U) | static_cast<std::uint8_t>(rest[header + i]);
        }
        header += extended;
    }
    if (rest.size() - header < length) {
        return std::nullopt;
    }
    at += header + length;
    return Frame{opcode, rest.substr(header, length)};
}

}  // namespace

/** One subscriber's connection and every head it was notified of. */
struct HeadSubscribers::Subscriber {
    explicit Subscriber(asio::io_context& io) : ws(io) {}

    struct Head {
        std::uint64_t height = 0;
        /** Arrival and the block's timestamp, ms since the epoch on the system clock. */
        double arrivedMs = 0;
        double timestampMs = 0;
    };

    /** Connects, subscribes to newHeads, then records every notification until closed. */
    asio::awaitable<void> run(asio::ip::tcp::endpoint node, std::atomic<std::size_t>& subscribed) {
        co_await beast::get_lowest_layer(ws).async_connect(node, asio::use_awaitable);
        co_await ws.async_handshake("127.0.0.1", "/ws", asio::use_awaitable);
        // The server sends nothing unasked, so nothing is left in the stream's buffer: from here
        // on the socket is read directly.
        const std::string_view subscribe =
            R"({"jsonrpc":"2.0","id":1,"method":"chain_subscribe","params":["newHeads"]})";
        co_await ws.async_write(asio::buffer(subscribe), asio::use_awaitable);
        std::string bytes;
        std::vector<char> chunk(kReadBytes);
        bool replied = false;
        for (std::size_t count = 0;;) {
            const std::size_t read = co_await beast::get_lowest_layer(ws).async_read_some(
                asio::buffer(chunk), asio::use_awaitable);
            const double arrived = wallMs();
            bytes.append(chunk.data(), read);
            std::size_t at = 0;
            while (const std::optional<Frame> frame = nextFrame(bytes, at)) {
                if (frame->opcode == kOpClose) {
                    co_return;
                }
                if (frame->opcode != kOpText) {
                    continue;  // a ping of the idle timeout: the node's heads keep it alive
                }
                if (!replied) {
                    const json::value reply = json::parse(frame->payload);
                    if (!reply.as_object().contains("result")) {
                        throw std::runtime_error("chain_subscribe answered " +
                                                 json::serialize(reply));
                    }
                    replied = true;
                    ++subscribed;
                    continue;
                }
                record(frame->payload, arrived, count++);
            }
            bytes.erase(0, at);
        }
    }

    /** Records the notification `text`, the `count`th, which arrived at `arrived`. */
    void record(std::string_view text, double arrived, std::size_t count) {
        const auto height = stringField(text, kHeightField);
        const auto timestamp = stringField(text, kTimestampField);
        if (!text.starts_with(kNotificationStart) || !height || !timestamp) {
            throw std::runtime_error("not a newHeads notification: " +
                                     std::string(text.substr(0, 200)));
        }
        if (count % kParsedEvery == 0) {
            checkFields(json::parse(text), *height, *timestamp);
        }
        heads.push_back({*height, arrived, static_cast<double>(*timestamp)});
        last = *height;
    }

    beast::websocket::stream<beast::tcp_stream> ws;
    std::vector<Head> heads;
    std::atomic<std::uint64_t> last{0};
    std::string error;
};

HeadSubscribers::HeadSubscribers(std::uint16_t port, std::size_t count,
                                 Clock::time_point deadline) {
    const asio::ip::tcp::endpoint node(asio::ip::make_address("127.0.0.1"), port);
    for (std::size_t i = 0; i < count; ++i) {
        auto& s = *subscribers_.emplace_back(std::make_unique<Subscriber>(io_));
        asio::co_spawn(io_, s.run(node, subscribed_), [this, &s](const std::exception_ptr& e) {
            if (!e || closing_) {
                return;
            }
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& what) {
                s.error = what.what();
            }
            ++failed_;
        });
    }
    thread_ = std::thread([this] { io_.run(); });
    while (subscribed_ < count && failed_ == 0 && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (subscribed_ < count) {
        closeAll();
        throw std::runtime_error(std::to_string(subscribed_) + " of " + std::to_string(count) +
                                 " newHeads subscriptions succeeded");
    }
}

HeadSubscribers::~HeadSubscribers() {
    closeAll();
}

void HeadSubscribers::closeAll() {
    if (!thread_.joinable()) {
        return;
    }
    closing_ = true;
    asio::post(io_, [this] {
        for (auto& s : subscribers_) {
            beast::get_lowest_layer(s->ws).close();
        }
    });
    thread_.join();
}

std::optional<HeadDelays> HeadSubscribers::finish(std::uint64_t first, std::uint64_t last,
                                                  Clock::time_point deadline) {
    const auto allSawLast = [&] {
        return std::all_of(subscribers_.begin(), subscribers_.end(),
                           [&](const auto& s) { return s->last >= last; });
    };
    while (!allSawLast() && failed_ == 0 && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    closeAll();
    std::map<std::uint64_t, double> firstArrival;
    for (const auto& s : subscribers_) {
        for (const auto& head : s->heads) {
            const auto at = firstArrival.try_emplace(head.height, head.arrivedMs).first;
            at->second = std::min(at->second, head.arrivedMs);
        }
    }
    std::vector<double> delays;
    std::vector<double> fanOut;
    for (std::size_t i = 0; i < subscribers_.size(); ++i) {
        const auto& heads = subscribers_[i]->heads;
        bool inOrder = !heads.empty() && heads.front().height <= first &&
                       heads.back().height >= last && subscribers_[i]->error.empty();
        for (std::size_t k = 1; inOrder && k < heads.size(); ++k) {
            inOrder = heads[k].height == heads[k - 1].height + 1;
        }
        if (!inOrder) {
            std::cerr << "subscriber " << i << " did not see heights " << first << ".." << last
                      << " once each and in order (" << heads.size() << " notifications, "
                      << subscribers_[i]->error << ")\n";
            return std::nullopt;
        }
        for (const auto& head : heads) {
            if (head.height >= first && head.height <= last) {
                delays.push_back(head.arrivedMs - head.timestampMs);
                fanOut.push_back(head.arrivedMs - firstArrival[head.height]);
            }
        }
    }
    if (delays.empty()) {
        std::cerr << "no head was committed between " << first << " and " << last << "\n";
        return std::nullopt;
    }
    std::sort(delays.begin(), delays.end());
    std::sort(fanOut.begin(), fanOut.end());
    return HeadDelays{delays.size(), quantile(delays, 0.5),  quantile(delays, 0.99),
                      delays.back(), quantile(fanOut, 0.99), fanOut.back()};
}

}  // namespace gridledger::bench
