// The OpenRPC document (rpc/openrpc.json): it describes exactly the methods the node serves, and
// rpc.discover returns it as kept in the repository.

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include <gridledger/rpc/chain_methods.h>
#include <gridledger/rpc/openrpc.h>

namespace gridledger::rpc {
namespace {

namespace json = boost::json;

/** The method table a node serves (src/node.cpp builds it with the same call). */
MethodTable nodeMethods() {
    MethodTable table;
    EXPECT_TRUE(addNodeMethods(table, ChainContext{}));
    return table;
}

TEST(OpenRpc, DocumentListsExactlyTheMethodsOfTheTable) {
    const auto listed = openRpcMethodNames();
    ASSERT_TRUE(listed) << listed.error().message;
    const std::set<std::string> unique(listed->begin(), listed->end());
    EXPECT_EQ(unique.size(), listed->size()) << "a method is listed twice";

    const MethodTable table = nodeMethods();
    const std::vector<std::string> served = table.names();
    std::vector<std::string> missing;
    std::set_difference(served.begin(), served.end(), unique.begin(), unique.end(),
                        std::back_inserter(missing));
    std::vector<std::string> extra;
    std::set_difference(unique.begin(), unique.end(), served.begin(), served.end(),
                        std::back_inserter(extra));
    EXPECT_TRUE(missing.empty()) << "served but not in rpc/openrpc.json: " << missing.front();
    EXPECT_TRUE(extra.empty()) << "in rpc/openrpc.json but not served: " << extra.front();
    EXPECT_GE(served.size(), 17U);
}

TEST(OpenRpc, AdminMethodsAreTaggedInTheDocumentAndLeftOutOfThePublicTable) {
    std::ifstream file(std::string(GRIDLEDGER_SOURCE_DIR) + "/rpc/openrpc.json");
    const std::string text((std::istreambuf_iterator<char>(file)),
                           std::istreambuf_iterator<char>());
    const json::value document = json::parse(text);
    std::vector<std::string> tagged;
    for (const json::value& method : document.at("methods").as_array()) {
        const json::value* tags = method.as_object().if_contains("tags");
        if (tags == nullptr) {
            continue;
        }
        for (const json::value& tag : tags->as_array()) {
            if (tag.at("name") == "admin") {
                tagged.emplace_back(method.at("name").as_string());
            }
        }
    }
    std::vector<std::string> admin = adminMethodNames();
    std::sort(tagged.begin(), tagged.end());
    std::sort(admin.begin(), admin.end());
    EXPECT_EQ(tagged, admin);
    EXPECT_NE(std::find(admin.begin(), admin.end(), "node_peers"), admin.end());

    MethodTable publicTable;
    ASSERT_TRUE(addNodeMethods(publicTable, ChainContext{}, Listener::kPublic));
    const MethodTable adminTable = nodeMethods();
    EXPECT_EQ(publicTable.size() + admin.size(), adminTable.size());
    for (const std::string& name : admin) {
        EXPECT_EQ(publicTable.find(name), nullptr) << name << " is served on the public listener";
        EXPECT_NE(adminTable.find(name), nullptr) << name;
    }
}

TEST(OpenRpc, DiscoverReturnsTheDocumentKeptInTheRepository) {
    std::ifstream file(std::string(GRIDLEDGER_SOURCE_DIR) + "/rpc/openrpc.json");
    ASSERT_TRUE(file) << "cannot open rpc/openrpc.json";
    const std::string text((std::istreambuf_iterator<char>(file)),
                           std::istreambuf_iterator<char>());
    const json::value expected = json::parse(text);

    const MethodTable table = nodeMethods();
    const Handler* discover = table.find(kDiscoverMethod);
    ASSERT_NE(discover, nullptr);
    const auto answer = (*discover)(json::value());
    ASSERT_TRUE(answer) << answer.error().message;
    EXPECT_EQ(*answer, expected);
    EXPECT_EQ(answer->at("openrpc"), "1.2.6");
    const auto emptyParams = (*discover)(json::array{});
    ASSERT_TRUE(emptyParams);
    EXPECT_EQ(*emptyParams, expected);
}

TEST(OpenRpc, DiscoverRefusesParameters) {
    const MethodTable table = nodeMethods();
    const auto answer = (*table.find(kDiscoverMethod))(json::array{json::string("x")});
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error().code, ErrorCode::kInvalidArgument);
}

TEST(OpenRpc, DiscoverCannotBeRegisteredTwice) {
    MethodTable table;
    ASSERT_TRUE(addDiscoverMethod(table));
    const auto again = addDiscoverMethod(table);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridledger::rpc
