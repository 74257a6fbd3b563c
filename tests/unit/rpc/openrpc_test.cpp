// The OpenRPC document (rpc/openrpc.json): it describes exactly the methods the node serves, and
// rpc.discover returns it as kept in the repository.

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include <gridledger/rpc/chain_methods.h>
#include <gridledger/rpc/openrpc.h>

namespace gridledger::rpc::openrpc_test {
namespace {

namespace json = boost::json;

/** The method table a node serves (src/node.cpp builds it with the same call). */
MethodTable nodeMethods() {
    MethodTable table;
    EXPECT_TRUE(addNodeMethods(table, ChainContext{}));
    return table;
}

/** rpc/openrpc.json of the source tree. */
json::value documentInRepository() {
    std::ifstream file(std::string(GRIDLEDGER_SOURCE_DIR) + "/rpc/openrpc.json");
    EXPECT_TRUE(file) << "cannot open rpc/openrpc.json";
    const std::string text((std::istreambuf_iterator<char>(file)),
                           std::istreambuf_iterator<char>());
    return json::parse(text);
}

/** Every old name the document lists under a method's x-aliases, with that method's name. */
std::set<std::pair<std::string, std::string>> documentedAliases(const json::value& document) {
    std::set<std::pair<std::string, std::string>> out;
    for (const json::value& method : document.at("methods").as_array()) {
        const json::value* aliases = method.as_object().if_contains("x-aliases");
        if (aliases == nullptr) {
            continue;
        }
        for (const json::value& alias : aliases->as_array()) {
            out.emplace(std::string(alias.as_string()), std::string(method.at("name").as_string()));
        }
    }
    return out;
}

TEST(OpenRpc, DocumentListsExactlyTheMethodsOfTheTableAndTheirOldNamesAsAliases) {
    const auto listed = openRpcMethodNames();
    ASSERT_TRUE(listed) << listed.error().message;
    std::set<std::string> unique(listed->begin(), listed->end());
    EXPECT_EQ(unique.size(), listed->size()) << "a method is listed twice";
    const auto aliases = documentedAliases(documentInRepository());
    for (const auto& [alias, name] : aliases) {
        EXPECT_TRUE(unique.insert(alias).second) << alias << " is both a method and an alias";
    }

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

    std::set<std::pair<std::string, std::string>> code;
    for (const MethodAlias& alias : methodAliases()) {
        code.emplace(std::string(alias.alias), std::string(alias.name));
    }
    EXPECT_EQ(aliases, code) << "x-aliases of rpc/openrpc.json differ from rpc::methodAliases()";
}

constexpr std::string_view kNamespaces[] = {
    "node",     "tx",       "account",    "chain", "block", "state",      "validator",
    "proposal", "provider", "tokenomics", "epoch", "task",  "attestation"};

/**
 * docs/rpc.md section 6, "Method names": <namespace>_<verb>[Part], the namespace a singular noun
 * of the thing read or acted on, the verb one of get, list, submit, subscribe, unsubscribe, and
 * a Part that names a part or form of that thing, never another namespace's thing (a block is
 * read under `block`, not as `chain_getBlock`).
 */
bool followsTheNamingRule(const std::string& name) {
    static const std::regex rule(
        "([a-z]+)_(get|list|submit|subscribe|unsubscribe)([A-Z][A-Za-z]*)?");
    std::smatch match;
    if (!std::regex_match(name, match, rule)) {
        return false;
    }
    const std::string space = match[1];
    std::string part = match[3];
    std::transform(part.begin(), part.end(), part.begin(), [](char c) {
        return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    });
    bool known = false;
    for (const std::string_view other : kNamespaces) {
        known = known || other == space;
        if (part.find(other) != std::string::npos) {
            return false;
        }
    }
    return known;
}

TEST(OpenRpc, EveryMethodNameFollowsTheNamingRuleAndNoOldNameDoes) {
    const auto listed = openRpcMethodNames();
    ASSERT_TRUE(listed) << listed.error().message;
    for (const std::string& name : *listed) {
        if (name != kDiscoverMethod) {  // the name the OpenRPC specification gives it
            EXPECT_TRUE(followsTheNamingRule(name)) << name << " breaks the naming rule";
        }
    }
    for (const MethodAlias& alias : methodAliases()) {
        EXPECT_FALSE(followsTheNamingRule(std::string(alias.alias)))
            << alias.alias << " follows the rule: it needs no new name";
    }
    // The rule refuses plural namespaces, unknown verbs and another namespace's thing as Part.
    EXPECT_FALSE(followsTheNamingRule("tasks_list"));
    EXPECT_FALSE(followsTheNamingRule("node_status"));
    EXPECT_FALSE(followsTheNamingRule("chain_getBlock"));
    EXPECT_FALSE(followsTheNamingRule("governance_getProposal"));
    EXPECT_TRUE(followsTheNamingRule("chain_getHead"));
}

TEST(OpenRpc, DiscoverListsTheNewNamesAndTheOldOnesOnlyAsAliases) {
    const MethodTable table = nodeMethods();
    const auto answer = (*table.find(kDiscoverMethod))(json::value());
    ASSERT_TRUE(answer) << answer.error().message;
    std::set<std::string> names;
    for (const json::value& method : answer->at("methods").as_array()) {
        names.emplace(method.at("name").as_string());
    }
    for (const MethodAlias& alias : methodAliases()) {
        EXPECT_TRUE(names.contains(std::string(alias.name))) << alias.name;
        EXPECT_FALSE(names.contains(std::string(alias.alias))) << alias.alias;
    }
    EXPECT_TRUE(documentedAliases(*answer).contains({"chain_getBlock", "block_get"}));
    EXPECT_TRUE(documentedAliases(*answer).contains({"tasks_list", "task_list"}));
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
    EXPECT_NE(std::find(admin.begin(), admin.end(), "node_getPeers"), admin.end());

    MethodTable publicTable;
    ASSERT_TRUE(addNodeMethods(publicTable, ChainContext{}, Listener::kPublic));
    const MethodTable adminTable = nodeMethods();
    const std::vector<std::string> adminOnly = withAliases(admin);
    EXPECT_EQ(publicTable.size() + adminOnly.size(), adminTable.size());
    for (const std::string& name : adminOnly) {
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
}  // namespace gridledger::rpc::openrpc_test
