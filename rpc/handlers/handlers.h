#pragma once

// Private to rpc/: the chain method handlers and the JSON views they share.

#include <boost/json.hpp>

#include <gridledger/codec/block.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/rpc/chain_methods.h>
#include <gridledger/rpc/params.h>

namespace gridledger::rpc::handlers {

using boost::json::value;

Result<value> nodeStatus(const ChainContext& ctx, const value& params);
Result<value> nodePeers(const ChainContext& ctx, const value& params);
Result<value> txSubmit(const ChainContext& ctx, const value& params);
Result<value> txGet(const ChainContext& ctx, const value& params);
Result<value> accountGet(const ChainContext& ctx, const value& params);
Result<value> chainGetHead(const ChainContext& ctx, const value& params);
Result<value> chainGetBlock(const ChainContext& ctx, const value& params);
std::shared_ptr<const std::string> keptBlock(const ChainContext& ctx, const value& params);
Result<value> chainGetRawBlocks(const ChainContext& ctx, const value& params);
Result<value> stateGetProof(const ChainContext& ctx, const value& params);
Result<value> validatorGetSet(const ChainContext& ctx, const value& params);
Result<value> governanceGetProposal(const ChainContext& ctx, const value& params);
Result<value> providerGet(const ChainContext& ctx, const value& params);
Result<value> tokenomicsGet(const ChainContext& ctx, const value& params);
Result<value> tokenomicsGetEpoch(const ChainContext& ctx, const value& params);
Result<value> taskGet(const ChainContext& ctx, const value& params);
Result<value> taskGetGroup(const ChainContext& ctx, const value& params);
Result<value> tasksList(const ChainContext& ctx, const value& params);
Result<value> providersList(const ChainContext& ctx, const value& params);
Result<value> proposalsList(const ChainContext& ctx, const value& params);
Result<value> epochsList(const ChainContext& ctx, const value& params);
Result<value> blocksList(const ChainContext& ctx, const value& params);
Result<value> attestationsList(const ChainContext& ctx, const value& params);

/** The executed head height; kUnavailable before genesis was written. */
Result<std::uint64_t> executedHeight(const ChainContext& ctx);

/**
 * The state height a read method looks at: the optional decimal param `height` (position `index`
 * or the named member), at most the executed head (kNotFound above it), else the head. On a node
 * started from a state snapshot, heights between genesis and its first height are kNotFound too.
 */
Result<std::uint64_t> readHeight(const ChainContext& ctx, const value& params, std::size_t index);

boost::json::object headerJson(const codec::Block& block);
boost::json::object qcJson(const codec::QuorumCert& qc);
boost::json::object receiptJson(const codec::Receipt& receipt);
/** An event's attributes as a JSON object of strings. */
boost::json::object attributesJson(const codec::Event& event);
/** The executed block at `height` as chain_getHead and the newHeads subscription show it. */
boost::json::object headJson(std::uint64_t height, const codec::Block& block,
                             const ledger::ExecRoots& roots);

}  // namespace gridledger::rpc::handlers
