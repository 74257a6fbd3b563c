// Checks that the programs linking jemalloc run with GridLedger's settings of it
// (src/allocator/malloc_conf.cpp), which jemalloc reads only where the program defines them.

#include <cstddef>

#include <gtest/gtest.h>
#include <sys/types.h>

// jemalloc's control interface; its header redeclares the C library's allocation functions.
extern "C" int mallctl(const char* name, void* oldp, std::size_t* oldlenp, void* newp,
                       std::size_t newlen);

namespace gridledger {
namespace {

/** The value jemalloc runs with for one of its ssize_t options, such as "opt.dirty_decay_ms". */
ssize_t option(const char* name) {
    ssize_t value = 0;
    std::size_t size = sizeof value;
    EXPECT_EQ(mallctl(name, &value, &size, nullptr, 0), 0) << name;
    return value;
}

TEST(Allocator, LeavesDecayedPagesForTheKernelToReclaim) {
    // Pages freed for 10 s (jemalloc's default, unchanged) are advised MADV_FREE and never
    // purged by jemalloc itself.
    EXPECT_EQ(option("opt.dirty_decay_ms"), 10'000);
    EXPECT_EQ(option("opt.muzzy_decay_ms"), -1);
}

}  // namespace
}  // namespace gridledger
