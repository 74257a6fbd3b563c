// Key files at rest: the encrypted format, passphrase sources, and how secret files are written
// and read (docs/operations.md, "Key files").

#include "key_file.h"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "home.h"
#include "support/temp_dir.h"

namespace gridledger::node::key_file_test {
namespace {

namespace fs = std::filesystem;

// The cheapest scrypt cost the format accepts keeps the tests fast; the cost is in the file.
constexpr crypto::ScryptParams kCheap{.n = 1024, .r = 8, .p = 1};

KeyProtection encrypted(std::string passphrase) {
    return KeyProtection{.passphrase = std::move(passphrase), .kdf = kCheap};
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

void overwrite(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

mode_t modeOf(const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777U;
}

/** `field` of the JSON key file text replaced by `value` (a 0x string). */
std::string withField(const std::string& text, const std::string& field, const std::string& value) {
    return std::regex_replace(text, std::regex("\"" + field + "\":\"0x[0-9a-f]*\""),
                              "\"" + field + "\":\"" + value + "\"");
}

/** The 0x hex of `field` in the JSON key file text with its last digit changed. */
std::string flippedField(const std::string& text, const std::string& field) {
    std::smatch match;
    EXPECT_TRUE(std::regex_search(text, match, std::regex("\"" + field + "\":\"(0x[0-9a-f]+)\"")));
    std::string hex = match[1];
    hex.back() = hex.back() == '0' ? '1' : '0';
    return withField(text, field, hex);
}

PassphraseSource source(fs::path file, std::string envVar, std::string hint = {}) {
    return PassphraseSource{.file = std::move(file),
                            .envVar = std::move(envVar),
                            .prompt = false,
                            .hint = std::move(hint)};
}

class KeyFiles : public ::testing::Test {
  protected:
    gridledger::testing::TempDir dir_;
    Home home_{dir_.path() / "home"};
};

TEST_F(KeyFiles, AnEncryptedAccountKeyRoundTrips) {
    const auto key = home_.createKey("validator", encrypted("s3cret pass"));
    ASSERT_TRUE(key) << key.error().message;
    auto passphrase = Passphrase::of("s3cret pass");
    const auto loaded = home_.loadKey("validator", passphrase);
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->secret(), key->secret());
    EXPECT_EQ(home_.keyEncrypted("validator").value(), true);
    EXPECT_EQ(home_.keyPublicKey("validator").value(), key->publicKey());
}

TEST_F(KeyFiles, AnEncryptedNodeKeyRoundTrips) {
    const auto key = home_.createNodeKey(encrypted("pw"));
    ASSERT_TRUE(key) << key.error().message;
    auto passphrase = Passphrase::of("pw");
    const auto loaded = home_.loadNodeKey(passphrase);
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->seed(), key->seed());
    EXPECT_EQ(home_.keyEncrypted("node").value(), true);
}

TEST_F(KeyFiles, TheFileFollowsTheDocumentedFormat) {
    ASSERT_TRUE(home_.createKey("dev", encrypted("pw")));
    const std::string text = slurp(home_.keyFile("dev"));
    EXPECT_TRUE(std::regex_search(
        text, std::regex(R"(^\{"version":1,"kind":"account","public_key":"0x[0-9a-f]{64}",)"
                         R"("kdf":"scrypt","n":1024,"r":8,"p":1,"salt":"0x[0-9a-f]{32}",)"
                         R"("cipher":"aes-256-gcm","nonce":"0x[0-9a-f]{24}",)"
                         R"("ciphertext":"0x[0-9a-f]{64}","tag":"0x[0-9a-f]{32}"\}\n$)")))
        << text;
}

TEST_F(KeyFiles, AWrongPassphraseIsAClearError) {
    ASSERT_TRUE(home_.createKey("validator", encrypted("right")));
    auto wrong = Passphrase::of("wrong");
    const auto loaded = home_.loadKey("validator", wrong);
    ASSERT_FALSE(loaded);
    EXPECT_EQ(loaded.error().code, ErrorCode::kConfig);
    EXPECT_NE(loaded.error().message.find("wrong passphrase for key 'validator'"),
              std::string::npos)
        << loaded.error().message;
}

TEST_F(KeyFiles, AnEncryptedKeyWithoutAPassphraseSourceSaysHowToGiveOne) {
    ASSERT_TRUE(home_.createKey("dev", encrypted("pw")));
    const auto plainOnly = home_.loadKey("dev");
    ASSERT_FALSE(plainOnly);
    EXPECT_NE(plainOnly.error().message.find("no passphrase given for key 'dev'"),
              std::string::npos)
        << plainOnly.error().message;
    Passphrase noSource(source({}, {}, "give --passphrase-file FILE"));
    const auto hinted = home_.loadKey("dev", noSource);
    ASSERT_FALSE(hinted);
    EXPECT_NE(hinted.error().message.find("give --passphrase-file FILE"), std::string::npos);
}

TEST_F(KeyFiles, ACopiedKeyFileRevealsNothingOfTheSecret) {
    const auto key = home_.createKey("validator", encrypted("pw"));
    const auto node = home_.createNodeKey(encrypted("pw"));
    ASSERT_TRUE(key && node);
    for (const auto& [file, secret] :
         {std::pair{home_.keyFile("validator"),
                    Bytes(key->secret().view().begin(), key->secret().view().end())},
          std::pair{home_.keyFile("node"),
                    Bytes(node->seed().view().begin(), node->seed().view().end())}}) {
        const std::string text = slurp(file);
        const std::string hex = toHex(secret);
        EXPECT_EQ(text.find(hex.substr(2)), std::string::npos) << file;
        std::string upper = hex.substr(2);
        for (auto& c : upper) {
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
        EXPECT_EQ(text.find(upper), std::string::npos) << file;
        EXPECT_EQ(text.find(toString(secret)), std::string::npos) << file;
        // Nor any 8-byte window of it, raw or hex.
        for (std::size_t i = 0; i + 8 <= secret.size(); ++i) {
            const ByteView window(secret.data() + i, 8);
            EXPECT_EQ(text.find(toHex(window).substr(2)), std::string::npos) << file << " @" << i;
            EXPECT_EQ(text.find(toString(window)), std::string::npos) << file << " @" << i;
        }
    }
}

TEST_F(KeyFiles, TamperedSaltNonceCiphertextOrTagFailCleanly) {
    ASSERT_TRUE(home_.createKey("dev", encrypted("pw")));
    const std::string original = slurp(home_.keyFile("dev"));
    for (const char* field : {"salt", "nonce", "ciphertext", "tag", "public_key"}) {
        overwrite(home_.keyFile("dev"), flippedField(original, field));
        auto passphrase = Passphrase::of("pw");
        const auto loaded = home_.loadKey("dev", passphrase);
        ASSERT_FALSE(loaded) << field;
        EXPECT_EQ(loaded.error().code, ErrorCode::kConfig) << field;
        EXPECT_NE(loaded.error().message.find("wrong passphrase for key 'dev'"), std::string::npos)
            << field << ": " << loaded.error().message;
    }
    // Truncated fields and a changed cost are refused too, never a crash or a garbage key.
    for (const auto& [field, value] :
         {std::pair{"tag", "0x00"}, std::pair{"salt", "0x"}, std::pair{"ciphertext", "0x1234"}}) {
        overwrite(home_.keyFile("dev"), withField(original, field, value));
        auto passphrase = Passphrase::of("pw");
        EXPECT_FALSE(home_.loadKey("dev", passphrase)) << field;
    }
    overwrite(home_.keyFile("dev"),
              std::regex_replace(original, std::regex("\"n\":1024"), "\"n\":1099511627776"));
    auto passphrase = Passphrase::of("pw");
    const auto huge = home_.loadKey("dev", passphrase);
    ASSERT_FALSE(huge);
    EXPECT_NE(huge.error().message.find("scrypt parameters"), std::string::npos);
}

TEST_F(KeyFiles, AKeyFileRenamedOrOfTheOtherKindDoesNotOpen) {
    ASSERT_TRUE(home_.createKey("alice", encrypted("pw")));
    ASSERT_TRUE(home_.createNodeKey(encrypted("pw")));
    fs::copy_file(home_.keyFile("alice"), home_.keyFile("bob"));
    auto passphrase = Passphrase::of("pw");
    const auto renamed = home_.loadKey("bob", passphrase);
    ASSERT_FALSE(renamed);
    EXPECT_NE(renamed.error().message.find("wrong passphrase for key 'bob'"), std::string::npos);

    fs::remove(home_.keyFile("node"));
    fs::copy_file(home_.keyFile("alice"), home_.keyFile("node"));
    const auto kind = home_.loadNodeKey(passphrase);
    ASSERT_FALSE(kind);
    EXPECT_NE(kind.error().message.find("kind 'account'"), std::string::npos);
}

TEST_F(KeyFiles, AnUnknownFormatVersionIsAClearError) {
    ASSERT_TRUE(home_.createKey("dev", encrypted("pw")));
    const std::string text = slurp(home_.keyFile("dev"));
    overwrite(home_.keyFile("dev"),
              std::regex_replace(text, std::regex("\"version\":1"), "\"version\":2"));
    auto passphrase = Passphrase::of("pw");
    const auto loaded = home_.loadKey("dev", passphrase);
    ASSERT_FALSE(loaded);
    EXPECT_NE(loaded.error().message.find("format version 2; this gridledger reads version 1"),
              std::string::npos)
        << loaded.error().message;
    overwrite(home_.keyFile("dev"), "{\"kdf\":\"scrypt\"}\n");
    const auto noVersion = home_.loadKey("dev", passphrase);
    ASSERT_FALSE(noVersion);
    EXPECT_NE(noVersion.error().message.find("no format version"), std::string::npos);
}

TEST_F(KeyFiles, PlainKeysStayReadableAndConvertToEncrypted) {
    const auto key = home_.createKey("dev");
    ASSERT_TRUE(key);
    EXPECT_EQ(slurp(home_.keyFile("dev")), toHex(key->secret().view()) + "\n");
    EXPECT_EQ(home_.keyEncrypted("dev").value(), false);
    EXPECT_EQ(home_.loadKey("dev").value().secret(), key->secret());

    ASSERT_TRUE(home_.encryptKey("dev", encrypted("pw")));
    EXPECT_EQ(home_.keyEncrypted("dev").value(), true);
    EXPECT_EQ(slurp(home_.keyFile("dev")).find(toHex(key->secret().view()).substr(2)),
              std::string::npos);
    auto passphrase = Passphrase::of("pw");
    EXPECT_EQ(home_.loadKey("dev", passphrase).value().secret(), key->secret());
    EXPECT_FALSE(home_.encryptKey("dev", encrypted("pw")));  // encrypted already
    EXPECT_EQ(modeOf(home_.keyFile("dev")), 0600U);

    const auto node = home_.createNodeKey();
    ASSERT_TRUE(node);
    ASSERT_TRUE(home_.encryptKey("node", encrypted("pw")));
    EXPECT_EQ(home_.loadNodeKey(passphrase).value().seed(), node->seed());
}

TEST_F(KeyFiles, PassphrasesComeFromAFileOrTheEnvironment) {
    const fs::path file = dir_.path() / "pass";
    overwrite(file, "from file\n");
    Passphrase fromFile(source(file, {}));
    EXPECT_EQ(fromFile.get("x").value(), "from file");
    overwrite(file, "crlf\r\n");
    EXPECT_EQ(Passphrase(source(file, {})).get("x").value(), "crlf");
    overwrite(file, "");
    const auto empty = Passphrase(source(file, {})).get("key 'a'");
    ASSERT_FALSE(empty);
    EXPECT_NE(empty.error().message.find("is empty"), std::string::npos);
    const auto missing = Passphrase(source(dir_.path() / "none", {})).get("x");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("cannot read passphrase file"), std::string::npos);

    ::setenv("GRIDLEDGER_KEY_FILE_TEST_PASS", "from env", 1);
    EXPECT_EQ(Passphrase(source({}, "GRIDLEDGER_KEY_FILE_TEST_PASS")).get("x").value(), "from env");
    ::unsetenv("GRIDLEDGER_KEY_FILE_TEST_PASS");
    EXPECT_FALSE(Passphrase(source({}, "GRIDLEDGER_KEY_FILE_TEST_PASS")).get("x"));
}

TEST_F(KeyFiles, KeyFilesAreCreated0600InAKeysDirectory0700) {
    const mode_t old = ::umask(0);  // a permissive umask must not widen them
    ASSERT_TRUE(home_.createKey("dev"));
    ASSERT_TRUE(home_.createKey("alice", encrypted("pw")));
    ASSERT_TRUE(home_.createNodeKey());
    ::umask(old);
    EXPECT_EQ(modeOf(home_.keyFile("dev")), 0600U);
    EXPECT_EQ(modeOf(home_.keyFile("alice")), 0600U);
    EXPECT_EQ(modeOf(home_.keyFile("node")), 0600U);
    EXPECT_EQ(modeOf(home_.root() / "keys"), 0700U);
    for (const auto& entry : fs::directory_iterator(home_.root() / "keys")) {
        EXPECT_EQ(entry.path().extension(), ".key") << "left behind: " << entry.path();
    }
}

TEST_F(KeyFiles, ALinkAtTheTempPathIsNotFollowed) {
    const fs::path victim = dir_.path() / "victim";
    overwrite(victim, "untouched");
    const fs::path target = dir_.path() / "secret";
    fs::create_symlink(victim, target.string() + ".tmp");
    ASSERT_TRUE(writeFileAtomically(target, "payload", 0600));
    EXPECT_EQ(slurp(victim), "untouched");
    EXPECT_EQ(slurp(target), "payload");
    EXPECT_EQ(modeOf(target), 0600U);
    EXPECT_TRUE(fs::is_symlink(target.string() + ".tmp"));  // not ours to remove
}

TEST_F(KeyFiles, ALinkAtTheTargetIsReplacedNotFollowed) {
    const fs::path victim = dir_.path() / "victim";
    overwrite(victim, "untouched");
    const fs::path target = dir_.path() / "secret";
    fs::create_symlink(victim, target);
    ASSERT_TRUE(writeFileAtomically(target, "payload", 0600));
    EXPECT_EQ(slurp(victim), "untouched");
    EXPECT_FALSE(fs::is_symlink(target));
    EXPECT_EQ(slurp(target), "payload");

    // A new key never replaces anything at its path, a link included.
    fs::create_directories(home_.root() / "keys");
    fs::create_symlink(victim, home_.keyFile("dev"));
    const auto refused = home_.createKey("dev");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("already exists"), std::string::npos);
    EXPECT_EQ(slurp(victim), "untouched");
}

TEST_F(KeyFiles, AKeyFileOthersMayReadIsRefusedWithTheFix) {
    ASSERT_TRUE(home_.createKey("dev"));
    fs::permissions(home_.keyFile("dev"), fs::perms(0644));
    const auto loaded = home_.loadKey("dev");
    ASSERT_FALSE(loaded);
    const std::string& message = loaded.error().message;
    EXPECT_NE(message.find(home_.keyFile("dev").string()), std::string::npos) << message;
    EXPECT_NE(message.find("mode 0644"), std::string::npos) << message;
    EXPECT_NE(message.find("chmod 600 " + home_.keyFile("dev").string()), std::string::npos)
        << message;
    fs::permissions(home_.keyFile("dev"), fs::perms(0620));
    EXPECT_FALSE(home_.loadKey("dev"));
    fs::permissions(home_.keyFile("dev"), fs::perms(0600));
    EXPECT_TRUE(home_.loadKey("dev"));
}

TEST_F(KeyFiles, AKeyFileThatIsALinkIsRefused) {
    ASSERT_TRUE(home_.createKey("dev"));
    const fs::path elsewhere = dir_.path() / "elsewhere.key";
    fs::rename(home_.keyFile("dev"), elsewhere);
    fs::create_symlink(elsewhere, home_.keyFile("dev"));
    const auto loaded = home_.loadKey("dev");
    ASSERT_FALSE(loaded);
    EXPECT_NE(loaded.error().message.find("symbolic link"), std::string::npos);
    EXPECT_NE(loaded.error().message.find(home_.keyFile("dev").string()), std::string::npos);
}

TEST_F(KeyFiles, TheConfigKeepsThePassphraseSources) {
    NodeConfig config;
    config.keyPassphraseFile = "secrets/pass";
    config.keyPassphraseEnv = "VALIDATOR_PASS";
    ASSERT_TRUE(home_.writeConfig(config));
    const auto loaded = home_.loadConfig();
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->keyPassphraseFile, "secrets/pass");
    EXPECT_EQ(loaded->keyPassphraseEnv, "VALIDATOR_PASS");
    ASSERT_TRUE(home_.writeDefaultConfig());
    EXPECT_EQ(home_.loadConfig().value().keyPassphraseFile, "");
}

}  // namespace
}  // namespace gridledger::node::key_file_test
