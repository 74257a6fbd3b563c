// config/node.conf's explorer key (docs/explorer.md): off in the template `init` writes, kept
// through a write and a read, and a relative directory is taken under the home.

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "home.h"
#include "support/temp_dir.h"

namespace gridledger::node::home_config_test {
namespace {

namespace fs = std::filesystem;

class HomeConfig : public ::testing::Test {
  protected:
    void SetUp() override { fs::create_directories(home_.configFile().parent_path()); }

    gridledger::testing::TempDir dir_;
    Home home_{dir_.path() / "home"};
};

TEST_F(HomeConfig, TheTemplateNamesTheExplorerKeyAndLeavesItOff) {
    ASSERT_TRUE(home_.writeDefaultConfig());
    std::ifstream in(home_.configFile());
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("\nexplorer_dir =\n"), std::string::npos) << text.str();
    const auto loaded = home_.loadConfig();
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->rpcExplorerDir, "");
    EXPECT_TRUE(home_.explorerDir(*loaded).empty());
}

TEST_F(HomeConfig, TheExplorerDirectoryIsKeptAndARelativeOneLiesUnderTheHome) {
    NodeConfig config;
    config.rpcExplorerDir = "explorer";
    ASSERT_TRUE(home_.writeConfig(config));
    const auto loaded = home_.loadConfig();
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->rpcExplorerDir, "explorer");
    EXPECT_EQ(home_.explorerDir(*loaded), home_.root() / "explorer");

    config.rpcExplorerDir = "/srv/gridledger/explorer";
    EXPECT_EQ(home_.explorerDir(config), fs::path("/srv/gridledger/explorer"));
}

}  // namespace
}  // namespace gridledger::node::home_config_test
