#pragma once

#include <string_view>

namespace gridledger::node {

/** genesis/dev.json as compiled in: the dev chain without validators and accounts. */
[[nodiscard]] std::string_view devGenesisTemplate();

}  // namespace gridledger::node
