#pragma once

namespace gridledger {

/** Combines lambdas into one visitor for std::visit: `std::visit(Overloaded{f, g}, v)`. */
template <typename... Fs>
struct Overloaded : Fs... {
    using Fs::operator()...;
};
/** Spelled out for compilers without aggregate deduction (clang). */
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace gridledger
