#include <algorithm>
#include <utility>

#include <gridledger/rpc/method_table.h>

namespace gridledger::rpc {
namespace {

constexpr std::size_t kMaxNameLength = 128;

bool isNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
}

}  // namespace

Status MethodTable::add(std::string name, Handler handler, KeptResult kept) {
    if (name.empty() || name.size() > kMaxNameLength ||
        !std::all_of(name.begin(), name.end(), isNameChar)) {
        return fail(ErrorCode::kInvalidArgument, "invalid method name \"" + name + "\"");
    }
    if (!handler) {
        return fail(ErrorCode::kInvalidArgument, "empty handler for method " + name);
    }
    if (handlers_.contains(name)) {
        return fail(ErrorCode::kInvalidArgument, "method already registered: " + name);
    }
    handlers_.emplace(std::move(name), Method{std::move(handler), std::move(kept)});
    return {};
}

const Handler* MethodTable::find(std::string_view name) const {
    const auto it = handlers_.find(name);
    return it == handlers_.end() ? nullptr : &it->second.handler;
}

const KeptResult* MethodTable::findKept(std::string_view name) const {
    const auto it = handlers_.find(name);
    return it == handlers_.end() || !it->second.kept ? nullptr : &it->second.kept;
}

std::vector<std::string> MethodTable::names() const {
    std::vector<std::string> out;
    out.reserve(handlers_.size());
    for (const auto& [name, method] : handlers_) {
        out.push_back(name);
    }
    return out;
}

}  // namespace gridledger::rpc
