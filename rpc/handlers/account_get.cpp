#include <gridledger/contracts/accounts.h>

#include "handlers.h"

namespace gridledger::rpc::handlers {

Result<value> accountGet(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"address", "height"}));
    GL_ASSIGN_OR_RETURN(address, requireFixedHex<20>(params, 0, "address"));
    GL_ASSIGN_OR_RETURN(head, executedHeight(ctx));
    GL_ASSIGN_OR_RETURN(at, optionalU64Decimal(params, 1, "height"));
    const std::uint64_t height = at.value_or(head);
    if (height > head) {
        return fail(ErrorCode::kNotFound, "height " + std::to_string(height) +
                                              " is above the executed head " +
                                              std::to_string(head));
    }
    GL_ASSIGN_OR_RETURN(account, contracts::readAccount(*ctx.tree, height, address));
    return boost::json::object{{"address", address.hex()},
                               {"height", std::to_string(height)},
                               {"nonce", std::to_string(account.nonce)},
                               {"balance", toDecimal(account.balance)}};
}

}  // namespace gridledger::rpc::handlers
