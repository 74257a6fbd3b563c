#pragma once

namespace gridledger {

/** Combines lambdas into one visitor for std::visit: `std::visit(Overloaded{f, g}, v)`. */
template <typename... Fs>
struct Overloaded : Fs... {
    using Fs::operator()...;
};

}  // namespace gridledger
