// Checks the ports tests give their nodes (support/process.h): ranges handed out in one process
// never overlap, and a test process running beside another is never given a port the other holds,
// even one that nothing has bound yet.

#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/process.h"

namespace gridledger {
namespace {

using Range = std::pair<std::size_t, std::size_t>;  // [first, end)

bool overlap(const Range& a, const Range& b) {
    return a.first < b.second && b.first < a.second;
}

TEST(FreePortRange, RangesOfOneProcessNeverOverlap) {
    std::vector<Range> ranges;
    for (int i = 0; i < 40; ++i) {
        const std::size_t count = 1 + static_cast<std::size_t>(i % 7);
        const std::size_t base = testing::freePortRange(count);
        EXPECT_GE(base, 10000U);
        EXPECT_LE(base + count, 32768U);
        for (const Range& earlier : ranges) {
            EXPECT_FALSE(overlap(earlier, {base, base + count}))
                << base << "+" << count << " overlaps " << earlier.first;
        }
        ranges.emplace_back(base, base + count);
    }
}

TEST(FreePortRange, AProcessBesideAnotherIsNeverGivenItsUnboundPorts) {
    constexpr int kParentRanges = 20;
    constexpr std::size_t kParentCount = 128;  // 2,560 of the 22,768 ports, none bound
    constexpr int kChildRanges = 50;
    constexpr std::size_t kChildCount = 4;
    int toChild[2];
    int toParent[2];
    ASSERT_EQ(pipe(toChild), 0);
    ASSERT_EQ(pipe(toParent), 0);
    // The child is forked before either process claims a port, as two test processes start.
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        char go = 0;
        if (read(toChild[0], &go, 1) != 1) {
            _exit(2);
        }
        for (int i = 0; i < kChildRanges; ++i) {
            const std::uint16_t base = testing::freePortRange(kChildCount);
            if (write(toParent[1], &base, sizeof base) != sizeof base) {
                _exit(3);
            }
        }
        _exit(0);
    }
    std::vector<Range> held;
    for (int i = 0; i < kParentRanges; ++i) {
        const std::size_t base = testing::freePortRange(kParentCount);
        held.emplace_back(base, base + kParentCount);
    }
    ASSERT_EQ(write(toChild[1], "g", 1), 1);
    for (int i = 0; i < kChildRanges; ++i) {
        std::uint16_t base = 0;
        ASSERT_EQ(read(toParent[0], &base, sizeof base), static_cast<ssize_t>(sizeof base));
        for (const Range& ours : held) {
            EXPECT_FALSE(overlap(ours, {base, base + kChildCount}))
                << "the other process was given " << base << ", inside " << ours.first << "+"
                << kParentCount;
        }
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    for (const int fd : {toChild[0], toChild[1], toParent[0], toParent[1]}) {
        close(fd);
    }
}

}  // namespace
}  // namespace gridledger
