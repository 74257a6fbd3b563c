#include "exec_check.h"

#include <string>

namespace gridledger::node {

Status checkCertifiedRoots(const codec::BlockHeader& header,
                           const std::optional<ledger::ExecRoots>& local) {
    const std::string where = "block height=" + std::to_string(header.height) +
                              " certifies exec_height=" + std::to_string(header.execHeight);
    if (!local) {
        return fail(ErrorCode::kDiverged, where + ", which this node has not executed");
    }
    if (local->stateRoot != header.execStateRoot || local->resultsRoot != header.execResultsRoot) {
        return fail(ErrorCode::kDiverged,
                    where + " with state_root=" + header.execStateRoot.hex() +
                        " results_root=" + header.execResultsRoot.hex() +
                        "; this node has state_root=" + local->stateRoot.hex() +
                        " results_root=" + local->resultsRoot.hex());
    }
    return {};
}

Status SendBarrier::beforeSend() {
    if (!pending_) {
        return {};
    }
    GL_TRY(store_.syncWal());
    pending_ = false;
    return {};
}

}  // namespace gridledger::node
