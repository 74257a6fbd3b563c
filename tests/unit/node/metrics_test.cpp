// The metrics server stops without waiting out its listener's poll of the listening socket, which
// looks at the stop flag only every 2 s: a node's stop would wait that long on it alone. It stops
// promptly when bound to one address and when bound to every address (where it is woken through
// the loopback address).

#include "metrics.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/sanitizer.h"

namespace gridledger::node::metrics_test {
namespace {

TEST(Metrics, StopsWithoutWaitingOutItsListenersTwoSecondPoll) {
    for (const std::string address : {"127.0.0.1", "0.0.0.0"}) {
        SCOPED_TRACE(address);
        auto metrics = Metrics::start(address, 0);
        ASSERT_TRUE(metrics) << metrics.error().message;
        ASSERT_NE((*metrics)->port(), 0);
        // Let the listener enter its poll, as it has in a node that ran for a while.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const auto started = std::chrono::steady_clock::now();
        metrics->reset();
        const auto took = std::chrono::steady_clock::now() - started;
        EXPECT_LT(took, testing::scaledWait(std::chrono::milliseconds(500)))
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
    }
}

}  // namespace
}  // namespace gridledger::node::metrics_test
