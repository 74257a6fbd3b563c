#include <algorithm>
#include <cctype>
#include <cstddef>

#include <gridledger/rpc/access.h>

namespace gridledger::rpc {
namespace {

constexpr std::string_view kAny = "*";
constexpr std::string_view kLoopbackNames[] = {"localhost", "127.0.0.1", "::1"};

bool equalNoCase(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

bool isPort(std::string_view text) {
    return !text.empty() && text.size() <= 5 && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
}

/** The name of `host:port`, `host`, `[v6]:port` or `[v6]` without brackets; empty when bad. */
std::string_view nameOf(std::string_view authority) {
    if (authority.starts_with('[')) {
        const std::size_t close = authority.find(']');
        if (close == std::string_view::npos) {
            return {};
        }
        const std::string_view rest = authority.substr(close + 1);
        if (!rest.empty() && !(rest.starts_with(':') && isPort(rest.substr(1)))) {
            return {};
        }
        return authority.substr(1, close - 1);
    }
    const std::size_t colon = authority.find(':');
    if (colon == std::string_view::npos) {
        return authority;
    }
    if (!isPort(authority.substr(colon + 1))) {
        return {};  // A second colon (a bare IPv6 address) or a port that is not a number.
    }
    return authority.substr(0, colon);
}

bool isLoopbackName(std::string_view name) {
    return std::any_of(std::begin(kLoopbackNames), std::end(kLoopbackNames),
                       [name](std::string_view loopback) { return equalNoCase(name, loopback); });
}

bool listed(std::string_view value, const std::vector<std::string>& list) {
    return std::any_of(list.begin(), list.end(), [value](const std::string& entry) {
        return entry == kAny || equalNoCase(value, entry);
    });
}

}  // namespace

bool hostAllowed(std::string_view host, const AccessPolicy& policy,
                 std::string_view listenAddress) {
    if (host.empty() || listed(kAny, policy.allowedHosts)) {
        return true;
    }
    const std::string_view name = nameOf(host);
    if (name.empty()) {
        return false;
    }
    return isLoopbackName(name) || equalNoCase(name, listenAddress) ||
           listed(name, policy.allowedHosts);
}

bool originAllowed(std::string_view origin, const AccessPolicy& policy) {
    if (origin.empty() || listed(origin, policy.allowedOrigins)) {
        return true;
    }
    for (const std::string_view scheme : {"http://", "https://"}) {
        if (origin.size() > scheme.size() && equalNoCase(origin.substr(0, scheme.size()), scheme)) {
            const std::string_view name = nameOf(origin.substr(scheme.size()));
            return !name.empty() && isLoopbackName(name);
        }
    }
    return false;
}

bool authorized(std::string_view authorization, const AccessPolicy& policy) {
    const std::string& token = policy.bearerToken;
    if (token.empty()) {
        return true;
    }
    constexpr std::string_view kScheme = "Bearer ";
    if (authorization.size() < kScheme.size() ||
        !equalNoCase(authorization.substr(0, kScheme.size()), kScheme)) {
        return false;
    }
    const std::string_view given = authorization.substr(kScheme.size());
    // Every byte of the token is compared whatever matched before, so the time taken tells
    // nothing about how much of a guess was right.
    unsigned difference = given.size() == token.size() ? 0U : 1U;
    for (std::size_t i = 0; i < token.size(); ++i) {
        const char other = i < given.size() ? given[i] : '\0';
        difference |= static_cast<unsigned>(static_cast<unsigned char>(other) ^
                                            static_cast<unsigned char>(token[i]));
    }
    return difference == 0;
}

}  // namespace gridledger::rpc
