#pragma once

#include <expected>
#include <string>
#include <utility>

#include <gridledger/base/error.h>

namespace gridledger {

/** Every fallible operation returns a Result: the value, or an Error with a stable code. */
template <typename T>
using Result = std::expected<T, Error>;

/** A Result that carries no value. */
using Status = Result<void>;

/** Builds the unexpected branch of a Result. */
[[nodiscard]] inline std::unexpected<Error> fail(ErrorCode code, std::string message) {
    return std::unexpected<Error>(Error{code, std::move(message)});
}

}  // namespace gridledger

/** Evaluates a Result expression; on error returns the error from the enclosing function. */
#define GL_TRY(expr)                                                   \
    do {                                                               \
        auto gl_try_result_ = (expr);                                  \
        if (!gl_try_result_) {                                         \
            return std::unexpected(std::move(gl_try_result_).error()); \
        }                                                              \
    } while (false)

/** Binds the value of a Result expression to `var`, or returns its error. */
// `var` names a new variable, it is no expression: it takes no parentheses.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define GL_ASSIGN_OR_RETURN(var, expr)                            \
    auto var##_result_ = (expr);                                  \
    if (!var##_result_) {                                         \
        return std::unexpected(std::move(var##_result_).error()); \
    }                                                             \
    auto var = std::move(var##_result_).value()
// NOLINTEND(bugprone-macro-parentheses)
