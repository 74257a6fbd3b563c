#include "support/ws_client.h"

#include <optional>
#include <stdexcept>

#include <boost/asio/connect.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace gridledger::testing {

namespace net = boost::asio;
namespace json = boost::json;
using tcp = net::ip::tcp;

WsClient::WsClient(std::uint16_t port, int receiveBuffer) : ws_(io_) {
    tcp::socket& socket = ws_.next_layer();
    socket.open(tcp::v4());
    if (receiveBuffer > 0) {
        socket.set_option(net::socket_base::receive_buffer_size(receiveBuffer));
    }
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    ws_.handshake("127.0.0.1", "/ws");
}

void WsClient::send(const json::value& request) {
    sendText(json::serialize(request));
}

void WsClient::sendText(std::string_view text) {
    ws_.write(net::buffer(text.data(), text.size()));
}

json::value WsClient::call(std::string_view text) {
    sendText(text);
    return read();
}

json::value WsClient::read(std::chrono::milliseconds timeout) {
    boost::beast::flat_buffer buffer;
    std::optional<boost::system::error_code> result;
    ws_.async_read(buffer, [&result](boost::system::error_code ec, std::size_t) { result = ec; });
    io_.restart();
    io_.run_for(timeout);
    if (!result) {
        ws_.next_layer().cancel();
        io_.restart();
        io_.run();  // lets the cancelled read complete
        throw std::runtime_error("no WebSocket message within " + std::to_string(timeout.count()) +
                                 " ms");
    }
    if (*result) {
        throw boost::system::system_error(*result);
    }
    return json::parse(boost::beast::buffers_to_string(buffer.data()));
}

std::string WsClient::subscribe(std::string_view topic, int id) {
    send(json::object{{"jsonrpc", "2.0"},
                      {"id", id},
                      {"method", "chain_subscribe"},
                      {"params", json::array{json::string(topic)}}});
    json::value answer = read();
    while (answer.as_object().contains("method")) {
        answer = read();  // A notification of an earlier subscription.
    }
    const json::value* result = answer.as_object().if_contains("result");
    EXPECT_TRUE(result != nullptr && result->is_string()) << json::serialize(answer);
    return result != nullptr && result->is_string() ? std::string(result->as_string())
                                                    : std::string();
}

void WsClient::shutdown() {
    ::shutdown(ws_.next_layer().native_handle(), SHUT_RDWR);
}

int WsClient::tcpState() {
    tcp_info info{};
    socklen_t size = sizeof info;
    ::getsockopt(ws_.next_layer().native_handle(), IPPROTO_TCP, TCP_INFO, &info, &size);
    return info.tcpi_state;
}

}  // namespace gridledger::testing
