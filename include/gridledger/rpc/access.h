#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gridledger::rpc {

/**
 * Who may use a listener (docs/rpc.md, "Access"). The Host and Origin checks stop a web page
 * from reaching a node on the operator's machine: through DNS rebinding (its own name resolving
 * to the node's address, seen in the Host header) or through a cross-site WebSocket (seen in the
 * Origin header, which a page cannot forge). Clients that are not browsers send no Origin.
 */
struct AccessPolicy {
    /**
     * Host header names accepted besides localhost, 127.0.0.1, [::1] and the listen address,
     * each with any port (compared without letter case). "*" accepts any Host.
     */
    std::vector<std::string> allowedHosts{};
    /**
     * Origin header values (`scheme://host[:port]`) accepted besides http(s) on localhost,
     * 127.0.0.1 and [::1] with any port. "*" accepts any Origin.
     */
    std::vector<std::string> allowedOrigins{};
    /** When not empty, every request must carry `Authorization: Bearer <bearerToken>`. */
    std::string bearerToken{};
};

/**
 * True when the Host header `host` (`name`, `name:port`, `[v6]` or `[v6]:port`) names the local
 * machine, `listenAddress`, or an entry of `policy.allowedHosts`. An absent Host (empty) is
 * accepted: browsers always send one.
 */
[[nodiscard]] bool hostAllowed(std::string_view host, const AccessPolicy& policy,
                               std::string_view listenAddress);

/** True when the Origin header `origin` is accepted by `policy`; an absent Origin (empty) is. */
[[nodiscard]] bool originAllowed(std::string_view origin, const AccessPolicy& policy);

/**
 * True when `policy.bearerToken` is empty, or `authorization` is `Bearer <token>` with exactly
 * that token. The comparison takes the same time wherever the first difference lies.
 */
[[nodiscard]] bool authorized(std::string_view authorization, const AccessPolicy& policy);

}  // namespace gridledger::rpc
