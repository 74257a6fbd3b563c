// Fuzz target: HTTP request bodies reaching the JSON-RPC dispatcher.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include <boost/json.hpp>

#include <gridledger/rpc/dispatcher.h>

namespace {

const gridledger::rpc::Dispatcher& dispatcher() {
    static const gridledger::rpc::Dispatcher instance = [] {
        gridledger::rpc::MethodTable methods;
        (void)methods.add(
            "echo", [](const boost::json::value& params) -> gridledger::Result<boost::json::value> {
                return params;
            });
        return gridledger::rpc::Dispatcher(std::move(methods), gridledger::rpc::ServerLimits{});
    }();
    return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    const auto reply = dispatcher().handle(body);
    if (reply) {
        boost::system::error_code ec;
        (void)boost::json::parse(*reply, ec);
        if (ec) {
            throw std::logic_error("the dispatcher answered with invalid JSON");
        }
    }
    return 0;
}
