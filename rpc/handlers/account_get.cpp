#include <gridledger/contracts/accounts.h>

#include "handlers.h"

namespace gridledger::rpc::handlers {

Result<value> accountGet(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"address", "height"}));
    GL_ASSIGN_OR_RETURN(address, requireFixedHex<20>(params, 0, "address"));
    GL_ASSIGN_OR_RETURN(height, readHeight(ctx, params, 1));
    GL_ASSIGN_OR_RETURN(account, contracts::readAccount(*ctx.tree, height, address));
    return boost::json::object{{"address", address.hex()},
                               {"height", std::to_string(height)},
                               {"nonce", std::to_string(account.nonce)},
                               {"balance", toDecimal(account.balance)}};
}

}  // namespace gridledger::rpc::handlers
