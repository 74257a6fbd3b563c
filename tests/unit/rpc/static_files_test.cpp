// The explorer's files over HTTP (rpc/static_files.cpp, ServerOptions::explorerDir): only files
// under the directory are served, with their content types; every way out of it is refused.

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include <gridledger/rpc/errors.h>
#include <gridledger/rpc/server.h>
#include <gridledger/rpc/static_files.h>

#include "support/temp_dir.h"
#include "unit/rpc/http_test_client.h"

namespace gridledger::rpc::static_files_test {
namespace {

namespace fs = std::filesystem;
namespace http = boost::beast::http;
using test::expectRpcError;
using test::HttpReply;
using test::HttpTestClient;

void writeText(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
}

/**
 * A site in `<tmp>/site` with an index, a script, a stylesheet and a nested file; beside it, out
 * of the site, `<tmp>/secret.txt`, and inside it a symbolic link to that secret and a hidden file.
 */
class StaticSite : public ::testing::Test {
  protected:
    void SetUp() override {
        site_ = dir_.path() / "site";
        writeText(site_ / "index.html", "<!doctype html><title>explorer</title>");
        writeText(site_ / "explorer.js", "console.log(1);");
        writeText(site_ / "explorer.css", "body{}");
        writeText(site_ / "assets" / "logo.svg", "<svg/>");
        writeText(site_ / ".env", "hidden");
        writeText(dir_.path() / "secret.txt", "secret");
        fs::create_symlink(dir_.path() / "secret.txt", site_ / "escape.txt");
        root_ = fs::canonical(site_);
    }

    testing::TempDir dir_;
    fs::path site_;
    fs::path root_;
};

TEST_F(StaticSite, ResolvesFilesAndTheIndexUnderTheRoot) {
    EXPECT_EQ(resolveStaticPath(root_, "").value(), root_ / "index.html");
    EXPECT_EQ(resolveStaticPath(root_, "explorer.js").value(), root_ / "explorer.js");
    EXPECT_EQ(resolveStaticPath(root_, "assets/logo.svg").value(), root_ / "assets" / "logo.svg");
    EXPECT_EQ(resolveStaticPath(root_, "assets%2flogo.svg").error().code,
              ErrorCode::kInvalidArgument)
        << "an escaped slash does not join segments";
    EXPECT_EQ(resolveStaticPath(root_, "explorer%2Ejs").value(), root_ / "explorer.js")
        << "percent escapes are decoded";
}

TEST_F(StaticSite, RefusesEveryPathThatLeavesTheRootOrNamesAHiddenFile) {
    for (const char* path :
         {"../secret.txt", "assets/../../secret.txt", "%2e%2e/secret.txt", "%2E%2E/secret.txt",
          "assets/%2e%2e/%2e%2e/secret.txt", "./index.html", "assets//logo.svg", ".env",
          "..%5csecret.txt", "%00index.html", "index.html%00", "%zz", "index%2", "%"}) {
        SCOPED_TRACE(path);
        const auto resolved = resolveStaticPath(root_, path);
        ASSERT_FALSE(resolved);
        EXPECT_EQ(resolved.error().code, ErrorCode::kInvalidArgument);
    }
}

TEST_F(StaticSite, ALinkOutOfTheRootADirectoryAndAMissingFileAreNotFound) {
    EXPECT_EQ(resolveStaticPath(root_, "escape.txt").error().code, ErrorCode::kNotFound);
    EXPECT_EQ(resolveStaticPath(root_, "assets").error().code, ErrorCode::kNotFound);
    EXPECT_EQ(resolveStaticPath(root_, "assets/").error().code, ErrorCode::kNotFound)
        << "a directory without an index";
    EXPECT_EQ(resolveStaticPath(root_, "missing.js").error().code, ErrorCode::kNotFound);
}

TEST(StaticContentType, FollowsTheExtensionInAnyCase) {
    EXPECT_EQ(contentTypeOf("index.html"), "text/html; charset=utf-8");
    EXPECT_EQ(contentTypeOf("INDEX.HTML"), "text/html; charset=utf-8");
    EXPECT_EQ(contentTypeOf("explorer.js"), "text/javascript; charset=utf-8");
    EXPECT_EQ(contentTypeOf("explorer.css"), "text/css; charset=utf-8");
    EXPECT_EQ(contentTypeOf("explorer.js.map"), "application/json");
    EXPECT_EQ(contentTypeOf("logo.svg"), "image/svg+xml");
    EXPECT_EQ(contentTypeOf("shot.png"), "image/png");
    EXPECT_EQ(contentTypeOf("README"), "application/octet-stream");
    EXPECT_EQ(contentTypeOf("archive.tar.gz"), "application/octet-stream");
}

/** The same site behind a running server. */
class ExplorerServer : public StaticSite {
  protected:
    void SetUp() override {
        StaticSite::SetUp();
        ServerOptions options;
        options.explorerDir = site_;
        server_ = std::make_unique<Server>(test::testMethods(), options);
        const Status started = server_->start();
        ASSERT_TRUE(started) << started.error().message;
    }

    std::unique_ptr<Server> server_;
};

TEST_F(ExplorerServer, ServesTheFilesWithTheirContentTypes) {
    HttpTestClient client(server_->port());
    const HttpReply index = client.get("/explorer/");
    ASSERT_EQ(index.status, 200U) << index.body;
    EXPECT_EQ(index.contentType, "text/html; charset=utf-8");
    EXPECT_EQ(index.body, "<!doctype html><title>explorer</title>");
    const HttpReply script = client.get("/explorer/explorer.js?v=1");
    ASSERT_EQ(script.status, 200U);
    EXPECT_EQ(script.contentType, "text/javascript; charset=utf-8");
    EXPECT_EQ(script.body, "console.log(1);");
    EXPECT_EQ(client.get("/explorer/explorer.css").contentType, "text/css; charset=utf-8");
    EXPECT_EQ(client.get("/explorer/assets/logo.svg").contentType, "image/svg+xml");
    // JSON-RPC is still served beside it, on the same connection.
    EXPECT_EQ(client.call("echo", boost::json::array{1}).at("result"), boost::json::array{1});
}

TEST_F(ExplorerServer, TheDirectoryWithoutItsSlashRedirectsToIt) {
    HttpTestClient client(server_->port());
    const HttpReply reply = client.get("/explorer");
    EXPECT_EQ(reply.status, 301U);
    EXPECT_EQ(reply.location, "/explorer/");
}

TEST_F(ExplorerServer, RefusesTraversalAndServesNothingOutsideTheDirectory) {
    for (const char* target :
         {"/explorer/../secret.txt", "/explorer/%2e%2e/secret.txt", "/explorer/%2e%2e%2fsecret.txt",
          "/explorer/assets/%2E%2E/%2E%2E/secret.txt", "/explorer/.env"}) {
        SCOPED_TRACE(target);
        HttpTestClient client(server_->port());
        const HttpReply reply = client.get(target);
        EXPECT_EQ(reply.status, 400U);
        expectRpcError(reply.json(), kInvalidRequest, "bad_path");
        EXPECT_EQ(reply.body.find("secret"), std::string::npos);
    }
    for (const char* target : {"/explorer/escape.txt", "/explorer/missing.js", "/explorer/assets",
                               "/secret.txt", "/explorerx/index.html"}) {
        SCOPED_TRACE(target);
        HttpTestClient client(server_->port());
        const HttpReply reply = client.get(target);
        EXPECT_EQ(reply.status, 404U);
        expectRpcError(reply.json(), kInvalidRequest, "path_not_found");
        EXPECT_EQ(reply.body.find("secret"), std::string::npos);
    }
}

TEST_F(ExplorerServer, OnlyGetIsAllowedAndTheHostCheckStillApplies) {
    HttpTestClient client(server_->port());
    const HttpReply post = client.get("/explorer/index.html", http::verb::post);
    EXPECT_EQ(post.status, 405U);
    EXPECT_EQ(post.allow, "GET");
    HttpTestClient rebound(server_->port());
    const HttpReply foreign =
        rebound.send(test::requestOf(http::verb::get, "/explorer/", "attacker.example"));
    EXPECT_EQ(foreign.status, 403U);
    expectRpcError(foreign.json(), kInvalidRequest, "forbidden_host");
}

TEST(ExplorerOff, NothingIsServedWithoutADirectoryAndAMissingOneFailsTheStart) {
    Server off(test::testMethods(), ServerOptions{});
    ASSERT_TRUE(off.start());
    HttpTestClient client(off.port());
    EXPECT_EQ(client.get("/explorer/").status, 404U);

    testing::TempDir dir;
    ServerOptions options;
    options.explorerDir = dir.path() / "not-built";
    Server missing(test::testMethods(), options);
    const Status started = missing.start();
    ASSERT_FALSE(started);
    EXPECT_EQ(started.error().code, ErrorCode::kConfig);
    EXPECT_NE(started.error().message.find("not-built"), std::string::npos);
}

}  // namespace
}  // namespace gridledger::rpc::static_files_test
