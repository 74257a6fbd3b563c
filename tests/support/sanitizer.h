#pragma once

// What a sanitizer build costs, for the tests whose limits are set for an uninstrumented build.
// The node processes a test starts are built with the same flags as the test itself, so the
// test's own build tells what they pay. The figures a test proves (a vote within one round
// timeout, a node under 256 MiB) hold in the uninstrumented build that `make test` runs; a
// sanitizer build looks for memory errors and races under the same scenarios, with its waits and
// memory limits scaled by the factors below.

#include <chrono>
#include <cstddef>

namespace gridledger::testing {

#if defined(__SANITIZE_THREAD__)
/** ThreadSanitizer: 5–15× slower, by its own documentation. */
inline constexpr int kSanitizerSlowdown = 5;
/** Shadow memory (5–10× the application's, by the same documentation, in part resident). */
inline constexpr std::size_t kSanitizerMemoryFactor = 3;
#elif defined(__SANITIZE_ADDRESS__)
/** AddressSanitizer: about 2× slower, by its own documentation. */
inline constexpr int kSanitizerSlowdown = 2;
/** Redzones, shadow memory and the quarantine of freed memory (up to 256 MiB by default). */
inline constexpr std::size_t kSanitizerMemoryFactor = 3;
#else
inline constexpr int kSanitizerSlowdown = 1;
inline constexpr std::size_t kSanitizerMemoryFactor = 1;
#endif

/** A wait set for an uninstrumented build, scaled for this one. */
template <typename Rep, typename Period>
constexpr std::chrono::duration<Rep, Period> scaledWait(std::chrono::duration<Rep, Period> wait) {
    return wait * kSanitizerSlowdown;
}

}  // namespace gridledger::testing
