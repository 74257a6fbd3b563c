#include "sim/trace.h"

#include <array>
#include <cstdio>
#include <string_view>

namespace gridledger::sim {
namespace {

std::string_view kindName(TraceKind kind) {
    static constexpr std::array<std::string_view, 20> kNames{
        "start",         "recv proposal", "recv vote",     "recv timeout",  "recv tc",
        "fetch request", "fetched block", "round timer",   "propose timer", "executed",
        "built block",   "payload",       "SEND proposal", "SEND vote",     "SEND timeout",
        "EQUIVOCATE",    "COMMIT",        "CRASH",         "RESTART",       "rejected"};
    const auto index = static_cast<std::size_t>(kind);
    return index < kNames.size() ? kNames[index] : std::string_view("?");
}

}  // namespace

std::string Trace::format() const {
    std::string out;
    for (const auto& e : entries_) {
        std::array<char, 160> line{};
        const int written = std::snprintf(
            line.data(), line.size(),
            "  t=%-7llu i%-2u %-14.*s from=i%-2u round=%-4llu height=%-4llu id=%08x\n",
            static_cast<unsigned long long>(e.atMs), e.instance,
            static_cast<int>(kindName(e.kind).size()), kindName(e.kind).data(), e.peer,
            static_cast<unsigned long long>(e.round), static_cast<unsigned long long>(e.height),
            e.idPrefix);
        if (written > 0) {
            out.append(line.data());
        }
    }
    return out;
}

}  // namespace gridledger::sim
