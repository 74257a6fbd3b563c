#include <gridledger/p2p/options.h>

namespace gridledger::p2p {

std::string_view reasonName(CloseReason reason) {
    switch (reason) {
        case CloseReason::kStopped:
            return "stopped";
        case CloseReason::kIoError:
            return "io_error";
        case CloseReason::kHandshakeFailed:
            return "handshake_failed";
        case CloseReason::kNotAllowed:
            return "not_allowed";
        case CloseReason::kNodeIdMismatch:
            return "node_id_mismatch";
        case CloseReason::kBanned:
            return "banned";
        case CloseReason::kSelf:
            return "self";
        case CloseReason::kTimeout:
            return "timeout";
        case CloseReason::kProtocol:
            return "protocol";
        case CloseReason::kFrameTooLarge:
            return "frame_too_large";
        case CloseReason::kMalformedFrame:
            return "malformed_frame";
        case CloseReason::kKeepAliveTimeout:
            return "keep_alive_timeout";
        case CloseReason::kWriteTimeout:
            return "write_timeout";
        case CloseReason::kQueueOverflow:
            return "queue_overflow";
        case CloseReason::kDuplicate:
            return "duplicate";
        case CloseReason::kSuperseded:
            return "superseded";
        case CloseReason::kMisbehaviour:
            return "misbehaviour";
        case CloseReason::kTooManyHandshakes:
            return "too_many_handshakes";
        case CloseReason::kTooManyConnections:
            return "too_many_connections";
    }
    return "unknown";
}

}  // namespace gridledger::p2p
