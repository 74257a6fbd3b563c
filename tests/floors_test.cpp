// Checks the floors of docs/architecture.md: no source includes a module from a higher floor or a
// sibling on its own floor, and generated protobuf headers are included only by base/codec sources.

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace gridledger {
namespace {

namespace fs = std::filesystem;

/** Floor of each module, by the name used in `#include <gridledger/NAME/...>` and folders. */
const std::map<std::string, int> kFloors = {
    {"base", 1},      {"crypto", 1},    {"codec", 1}, {"storage", 1}, {"proto", 1}, {"ledger", 2},
    {"consensus", 2}, {"contracts", 3}, {"p2p", 3},   {"rpc", 4},     {"node", 5},
};

/** The module a source file belongs to, from its path relative to the repository root. */
std::string moduleOf(const fs::path& relative) {
    auto it = relative.begin();
    const std::string top = it->string();
    if (top == "include" && std::distance(relative.begin(), relative.end()) > 2) {
        std::advance(it, 2);  // include/gridledger/<module>/
        return it->string();
    }
    if (top == "base" && std::distance(relative.begin(), relative.end()) > 2) {
        ++it;
        return it->string();  // base/crypto, base/codec, base/storage
    }
    return top == "src" ? "node" : top;
}

/** Every include that breaks a floor, as "file: included". */
std::vector<std::string> floorViolations(const fs::path& root) {
    static const std::regex include(R"(^\s*#\s*include\s*<gridledger/([a-z_0-9]+)/)");
    std::vector<std::string> out;
    for (const char* dir :
         {"include", "base", "ledger", "consensus", "contracts", "p2p", "rpc", "src"}) {
        if (!fs::exists(root / dir)) {
            continue;
        }
        for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
            const auto ext = entry.path().extension();
            if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".in")) {
                continue;
            }
            const fs::path relative = fs::relative(entry.path(), root);
            const std::string self = moduleOf(relative);
            const auto selfFloor = kFloors.find(self);
            if (selfFloor == kFloors.end()) {
                out.push_back(relative.string() + ": unknown module '" + self + "'");
                continue;
            }
            std::ifstream in(entry.path());
            std::string line;
            while (std::getline(in, line)) {
                std::smatch match;
                if (!std::regex_search(line, match, include)) {
                    continue;
                }
                const std::string used = match[1];
                const auto usedFloor = kFloors.find(used);
                const bool protoOutsideCodec =
                    used == "proto" && (self != "codec" || relative.begin()->string() == "include");
                const bool upwards = usedFloor == kFloors.end() ||
                                     usedFloor->second > selfFloor->second ||
                                     (usedFloor->second == selfFloor->second &&
                                      selfFloor->second > 1 && used != self);
                if (protoOutsideCodec || upwards) {
                    out.push_back(relative.string() + ": " + line);
                }
            }
        }
    }
    return out;
}

TEST(Floors, NoIncludeReachesAHigherFloorOrASibling) {
    const auto violations = floorViolations(GRIDLEDGER_SOURCE_DIR);
    for (const auto& v : violations) {
        ADD_FAILURE() << v;
    }
    EXPECT_TRUE(violations.empty());
}

TEST(Floors, TheCheckCatchesUpwardSiblingAndProtoIncludes) {
    testing::TempDir dir;
    const auto write = [&dir](const std::string& path, const std::string& text) {
        fs::create_directories((dir.path() / path).parent_path());
        std::ofstream(dir.path() / path) << text;
    };
    write("consensus/core.cpp", "#include <gridledger/consensus/core.h>\n");
    write("ledger/ok.cpp", "#include <gridledger/codec/tx.h>\n");
    EXPECT_TRUE(floorViolations(dir.path()).empty());

    write("consensus/bad.cpp", "#include <gridledger/ledger/mempool.h>\n");
    write("base/crypto/bad.cpp", "#include <gridledger/rpc/server.h>\n");
    write("include/gridledger/ledger/bad.h", "#include <gridledger/proto/chain.pb.h>\n");
    EXPECT_EQ(floorViolations(dir.path()).size(), 3U);
}

}  // namespace
}  // namespace gridledger
