// The keys and genesis entry `gridledger init` and `testnet` make for a validator: a consensus key,
// a separate account key, and a node key.

#include "genesis_builder.h"

#include <gtest/gtest.h>

#include <gridledger/contracts/genesis.h>

#include "support/temp_dir.h"

namespace gridledger::node::genesis_builder_test {
namespace {

TEST(GenesisBuilder, AValidatorsAccountIsAKeyApartFromItsConsensusKey) {
    gridledger::testing::TempDir dir;
    const Home home(dir.path() / "home");
    const auto validator = createValidatorKeys(home, "v0");
    ASSERT_TRUE(validator) << validator.error().message;
    const auto consensus = home.loadKey(std::string(kConsensusKeyName));
    const auto account = home.loadKey(std::string(kAccountKeyName));
    ASSERT_TRUE(consensus && account);
    EXPECT_EQ(validator->consensusKey, consensus->publicKey());
    EXPECT_EQ(validator->account, crypto::addressOf(account->publicKey()));
    EXPECT_NE(validator->account, crypto::addressOf(consensus->publicKey()));
    EXPECT_EQ(validator->nodeId, home.loadNodeKey().value().nodeId());

    const auto genesis = buildDevGenesis({*validator}, Address{{7}}, {});
    ASSERT_TRUE(genesis) << genesis.error().message;
    const auto parsed = contracts::parseGenesis(*genesis);
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(parsed->validators.at(0).account, validator->account);

    // A second call writes nothing more: the keys are there.
    EXPECT_FALSE(createValidatorKeys(home, "v0"));
}

TEST(GenesisBuilder, EncryptedValidatorKeysAreAllEncrypted) {
    gridledger::testing::TempDir dir;
    const Home home(dir.path() / "home");
    const KeyProtection protection{.passphrase = "pw", .kdf = {.n = 1024, .r = 8, .p = 1}};
    ASSERT_TRUE(createValidatorKeys(home, "v0", protection));
    for (const char* name : {"validator", "validator-account", "node"}) {
        EXPECT_EQ(home.keyEncrypted(name).value_or(false), true) << name;
    }
}

}  // namespace
}  // namespace gridledger::node::genesis_builder_test
