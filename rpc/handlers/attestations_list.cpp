#include <gridledger/contracts/params.h>
#include <gridledger/contracts/providers.h>

#include "paging.h"

namespace gridledger::rpc::handlers {
namespace {

boost::json::object attestationJson(const contracts::Attestation& a) {
    boost::json::array devices;
    for (const auto& d : a.claim.devices) {
        devices.push_back(
            boost::json::object{{"model", d.model}, {"count", std::to_string(d.count)}});
    }
    boost::json::array evidence;
    for (const auto& h : a.claim.evidence) {
        evidence.push_back(boost::json::string(h.hex()));
    }
    return boost::json::object{{"provider", a.provider.hex()},
                               {"epoch", std::to_string(a.epoch)},
                               {"slot", std::to_string(a.slot)},
                               {"height", std::to_string(a.height)},
                               {"timestamp_ms", std::to_string(a.timestampMs)},
                               {"category", a.claim.category},
                               {"devices", std::move(devices)},
                               {"power_watts", std::to_string(a.claim.powerWatts)},
                               {"renewable_share_bps", a.claim.renewableShareBps},
                               {"evidence", std::move(evidence)},
                               {"gflops", std::to_string(a.gflops)},
                               {"challenged", a.challenged},
                               {"challenger", a.challenged ? a.challenger.hex() : std::string()},
                               {"challenge_reason", a.challengeReason},
                               {"challenge_height", std::to_string(a.challengeHeight)}};
}

}  // namespace

/**
 * params: `provider` (address), `epoch` (decimal string), then the page params `height`,
 * `cursor`, `limit` (paging.h). A page of the provider's PoCP attestations in that tokenomics
 * epoch, ascending by slot; slots it did not attest are left out.
 */
Result<value> attestationsList(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"provider", "epoch", "height", "cursor", "limit"}));
    GL_ASSIGN_OR_RETURN(provider, requireFixedHex<20>(params, 0, "provider"));
    GL_ASSIGN_OR_RETURN(epoch, requireU64Decimal(params, 1, "epoch"));
    GL_ASSIGN_OR_RETURN(request, readPageRequest(ctx, params, 2,
                                                 "attestations_list|" + provider.hex() + "|" +
                                                     std::to_string(epoch)));
    GL_ASSIGN_OR_RETURN(chainParams, contracts::readParams(*ctx.tree, request.height));
    const std::uint64_t slots = chainParams.tokenomics.slotsPerEpoch();
    if (slots == 0) {
        return pageOfRange(request, 1, 0, {});
    }
    return pageOfRange(
        request, 0, slots - 1, [&](std::uint64_t slot) -> Result<std::optional<value>> {
            GL_ASSIGN_OR_RETURN(found, contracts::readAttestation(*ctx.tree, request.height,
                                                                  provider, epoch, slot));
            if (!found) {
                return std::optional<value>();
            }
            return value(attestationJson(*found));
        });
}

}  // namespace gridledger::rpc::handlers
