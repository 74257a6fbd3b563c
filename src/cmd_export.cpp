// gridledger export epochs|tasks|providers: an auditor's report of settled epochs, tasks or
// providers (with their reputation), read over
// JSON-RPC from a node at one height (docs/operations.md "Exporting reports").
#include <iostream>
#include <map>
#include <optional>
#include <string_view>

#include <boost/json.hpp>

#include <gridledger/base/amount.h>
#include <gridledger/contracts/task_lifecycle.h>
#include <gridledger/rpc/cursor.h>

#include "cli_options.h"

namespace gridledger::node {
namespace po = boost::program_options;
namespace json = boost::json;

namespace {

/** The columns of `export epochs --format csv`, in order; the summary fields come first. */
constexpr std::string_view kEpochColumns[] = {
    "epoch",       "boundary_ms",       "height",     "state_root",           "providers",
    "gfl_supply",  "gfl_payout_burned", "gfl_minted", "gfl_rebalance_burned", "dps_owed",
    "dps_paid",    "dps_shortfall",     "halvings",   "halved_by_period",     "halved_by_threshold",
    "reward_pool", "converted_gfl",     "medians",    "provider_dps_paid"};

/**
 * The columns of `export tasks --format csv`: the fields of task_get, arrays and the spot check as
 * JSON text (empty when there is none).
 */
constexpr std::string_view kTaskColumns[] = {
    "id",          "height",     "consumer",       "provider",       "state",
    "category",    "min_gflops", "constraints",    "max_minutes",    "rate_per_minute",
    "escrow",      "deposit",    "created_height", "spec_hash",      "result_hash",
    "reported_ms", "charged",    "group",          "verdict_due_ms", "excluded",
    "history",     "spot_check"};

/**
 * The columns of `export providers --format csv`: provider_get's scalar fields, its reputation
 * flattened (`score`, `good`, `faults`, `reputation_epoch`), jobs and inventory as JSON text.
 */
constexpr std::string_view kProviderColumns[] = {
    "address",     "height", "status",     "registered_height", "status_height",
    "gfl_balance", "bond",   "bond_state", "unbond_release_ms", "slashed",
    "score",       "good",   "faults",     "reputation_epoch",  "jobs",
    "inventory"};

std::unexpected<Error> malformed(const std::string& what) {
    return fail(ErrorCode::kMalformed, "node answered without " + what);
}

Result<const json::object*> objectOf(const json::value& value, const std::string& what) {
    if (!value.is_object()) {
        return malformed(what);
    }
    return &value.as_object();
}

Result<std::string> stringField(const json::object& obj, std::string_view key) {
    const json::value* found = obj.if_contains(key);
    if (found == nullptr || !found->is_string()) {
        return malformed("a string `" + std::string(key) + "`");
    }
    return std::string(found->as_string());
}

/** A JSON scalar as CSV text: strings as they are, numbers in decimal, arrays as JSON. */
std::string cellText(const json::value* value) {
    if (value == nullptr || value->is_null()) {
        return {};
    }
    if (value->is_string()) {
        return std::string(value->as_string());
    }
    if (value->is_bool()) {
        return value->as_bool() ? "true" : "false";
    }
    return json::serialize(*value);
}

/** RFC 4180 quoting: a field with a comma, quote or line break is quoted, quotes doubled. */
std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) {
        return text;
    }
    std::string out = "\"";
    for (const char c : text) {
        out += c;
        if (c == '"') {
            out += '"';
        }
    }
    return out + "\"";
}

template <std::size_t N>
std::string toCsv(const std::string_view (&columns)[N], const json::array& rows) {
    std::string out;
    for (std::size_t i = 0; i < N; ++i) {
        out += (i == 0 ? "" : ",") + std::string(columns[i]);
    }
    out += "\n";
    for (const auto& row : rows) {
        const json::object& obj = row.as_object();
        for (std::size_t i = 0; i < N; ++i) {
            out += (i == 0 ? "" : ",") + csvField(cellText(obj.if_contains(columns[i])));
        }
        out += "\n";
    }
    return out;
}

/** The per-provider settlement of `epoch` from the events of its block's system receipt. */
Result<json::array> settledProviders(const json::object& block, const std::string& epoch) {
    const json::value* receipt = block.if_contains("system_receipt");
    if (receipt == nullptr || !receipt->is_object()) {
        return malformed("the settling block's system_receipt");
    }
    const json::value* events = receipt->as_object().if_contains("events");
    if (events == nullptr || !events->is_array()) {
        return malformed("system_receipt events");
    }
    // Keyed by address: the settlement runs in ascending address order, and so does the export.
    std::map<std::string, json::object> providers;
    for (const auto& event : events->as_array()) {
        GL_ASSIGN_OR_RETURN(e, objectOf(event, "an event object"));
        GL_ASSIGN_OR_RETURN(kind, stringField(*e, "kind"));
        const json::value* attrs = e->if_contains("attributes");
        if (attrs == nullptr || !attrs->is_object()) {
            return malformed("event attributes");
        }
        const json::object& a = attrs->as_object();
        if (kind != "provider_settled" && kind != "dps_paid") {
            continue;
        }
        GL_ASSIGN_OR_RETURN(eventEpoch, stringField(a, "epoch"));
        if (eventEpoch != epoch) {
            continue;  // one block may settle several epochs
        }
        GL_ASSIGN_OR_RETURN(provider, stringField(a, "provider"));
        json::object& entry = providers[provider];
        entry["provider"] = provider;
        if (kind == "provider_settled") {
            for (const char* key : {"median", "balance_before", "balance_after"}) {
                GL_ASSIGN_OR_RETURN(v, stringField(a, key));
                entry[key] = v;
            }
        } else {
            for (const auto& [from, to] :
                 {std::pair{"owed", "dps_owed"}, std::pair{"paid", "dps_paid"},
                  std::pair{"shortfall", "dps_shortfall"}}) {
                GL_ASSIGN_OR_RETURN(v, stringField(a, from));
                entry[to] = v;
            }
        }
    }
    json::array out;
    for (auto& [address, entry] : providers) {
        for (const char* key : {"dps_owed", "dps_paid", "dps_shortfall"}) {
            if (!entry.contains(key)) {
                entry[key] = "0";  // nothing was owed: no dps_paid event
            }
        }
        out.push_back(std::move(entry));
    }
    return out;
}

/** "addr=value addr=value" over the settled providers, for one CSV cell. */
std::string providerList(const json::array& settled, std::string_view key) {
    std::string out;
    for (const auto& p : settled) {
        const json::object& o = p.as_object();
        out += (out.empty() ? "" : " ") + cellText(o.if_contains("provider")) + "=" +
               cellText(o.if_contains(key));
    }
    return out;
}

/** Every settled epoch as of the node's executed head, oldest first. */
Result<json::array> readEpochs(const Endpoint& endpoint) {
    GL_ASSIGN_OR_RETURN(stateValue, callRpc(endpoint, "tokenomics_get", json::object{}));
    GL_ASSIGN_OR_RETURN(state, objectOf(stateValue, "a tokenomics object"));
    GL_ASSIGN_OR_RETURN(height, stringField(*state, "height"));
    GL_ASSIGN_OR_RETURN(nextText, stringField(*state, "next_epoch"));
    GL_ASSIGN_OR_RETURN(settled, parseU64(nextText));
    json::array rows;
    for (std::uint64_t k = 0; k < settled; ++k) {
        const std::string epoch = std::to_string(k);
        GL_ASSIGN_OR_RETURN(
            summaryValue,
            callRpc(endpoint, "epoch_get", json::object{{"epoch", epoch}, {"height", height}}));
        GL_ASSIGN_OR_RETURN(summary, objectOf(summaryValue, "an epoch summary"));
        GL_ASSIGN_OR_RETURN(at, stringField(*summary, "height"));
        GL_ASSIGN_OR_RETURN(blockValue,
                            callRpc(endpoint, "block_get", json::object{{"height", at}}));
        GL_ASSIGN_OR_RETURN(block, objectOf(blockValue, "a block"));
        GL_ASSIGN_OR_RETURN(root, stringField(*block, "state_root"));
        GL_ASSIGN_OR_RETURN(providers, settledProviders(*block, epoch));
        json::object row = *summary;
        row["state_root"] = root;
        row["medians"] = providerList(providers, "median");
        row["provider_dps_paid"] = providerList(providers, "dps_paid");
        row["settled"] = std::move(providers);
        rows.push_back(std::move(row));
    }
    return rows;
}

/**
 * Every task in any state as of one height, ascending by id, as task_get shows it: task_list by
 * each state, page after page, every page pinned to the height of the first.
 */
Result<json::array> readTasks(const Endpoint& endpoint) {
    std::optional<std::string> height;
    std::map<std::string, json::value> tasks;
    for (std::uint8_t s = 0; s < contracts::kTaskStateCount; ++s) {
        const std::string name(contracts::taskStateName(static_cast<contracts::TaskState>(s)));
        json::value cursor = nullptr;
        do {
            json::object params{{"by", "state"}, {"key", name}, {"limit", rpc::kMaxPageLimit}};
            if (cursor.is_string()) {
                params["cursor"] = cursor;
            } else if (height) {
                params["height"] = *height;
            }
            GL_ASSIGN_OR_RETURN(pageValue, callRpc(endpoint, "task_list", params));
            GL_ASSIGN_OR_RETURN(page, objectOf(pageValue, "a page of tasks"));
            if (!height) {
                GL_ASSIGN_OR_RETURN(at, stringField(*page, "height"));
                height = at;
            }
            const json::value* items = page->if_contains("items");
            const json::value* next = page->if_contains("next_cursor");
            if (items == nullptr || !items->is_array() || next == nullptr ||
                !(next->is_null() || next->is_string())) {
                return malformed("an `items` array and a `next_cursor`");
            }
            for (const auto& item : items->as_array()) {
                GL_ASSIGN_OR_RETURN(task, objectOf(item, "a task"));
                GL_ASSIGN_OR_RETURN(id, stringField(*task, "id"));
                tasks.emplace(id, item);
            }
            cursor = *next;
        } while (cursor.is_string());
    }
    json::array rows;
    for (auto& [id, task] : tasks) {
        rows.push_back(std::move(task));
    }
    return rows;
}

/**
 * Every registered provider as of one height, ascending by address, as provider_get shows it:
 * provider_list page after page, every page pinned to the height of the first.
 */
Result<json::array> readProviders(const Endpoint& endpoint) {
    json::array rows;
    json::value cursor = nullptr;
    do {
        json::object params{{"limit", rpc::kMaxPageLimit}};
        if (cursor.is_string()) {
            params["cursor"] = cursor;
        }
        GL_ASSIGN_OR_RETURN(pageValue, callRpc(endpoint, "provider_list", params));
        GL_ASSIGN_OR_RETURN(page, objectOf(pageValue, "a page of providers"));
        const json::value* items = page->if_contains("items");
        const json::value* next = page->if_contains("next_cursor");
        if (items == nullptr || !items->is_array() || next == nullptr ||
            !(next->is_null() || next->is_string())) {
            return malformed("an `items` array and a `next_cursor`");
        }
        for (const auto& item : items->as_array()) {
            GL_ASSIGN_OR_RETURN(provider, objectOf(item, "a provider"));
            const json::value* reputation = provider->if_contains("reputation");
            if (reputation == nullptr || !reputation->is_object()) {
                return malformed("a provider's `reputation` object");
            }
            rows.push_back(item);
        }
        cursor = *next;
    } while (cursor.is_string());
    return rows;
}

/** The providers' rows with the reputation flattened into the CSV columns. */
json::array flatProviders(const json::array& providers) {
    json::array rows;
    for (const auto& item : providers) {
        json::object row = item.as_object();
        const json::object& reputation = row.at("reputation").as_object();
        for (const auto* key : {"score", "good", "faults"}) {
            if (const auto* v = reputation.if_contains(key)) {
                row[key] = *v;
            }
        }
        if (const auto* v = reputation.if_contains("epoch")) {
            row["reputation_epoch"] = *v;
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace

int runExport(const Args& args) {
    std::string homeFlag;
    std::string what;
    std::string format = "csv";
    std::string rpc;
    po::options_description desc("gridledger export epochs|tasks|providers [--format csv|json]");
    desc.add_options()("what", po::value(&what)->required(), "epochs, tasks or providers")(
        "format", po::value(&format), "csv (default) or json")("rpc", po::value(&rpc),
                                                               "node RPC endpoint host:port");
    po::positional_options_description positional;
    positional.add("what", 1);
    int exitCode = 0;
    if (!parseOptions("export", desc, positional, args, homeFlag, exitCode)) {
        return exitCode;
    }
    if ((what != "epochs" && what != "tasks" && what != "providers") ||
        (format != "csv" && format != "json")) {
        std::cerr << "gridledger export: expected epochs|tasks|providers and --format csv|json\n"
                  << desc;
        return 2;
    }
    auto endpoint = resolveEndpoint(rpc, Home::resolve(homeFlag));
    if (!endpoint) {
        return reportError("export", endpoint.error());
    }
    auto rows = what == "epochs"  ? readEpochs(*endpoint)
                : what == "tasks" ? readTasks(*endpoint)
                                  : readProviders(*endpoint);
    if (!rows) {
        return reportError("export", rows.error());
    }
    if (format == "json") {
        std::cout << json::serialize(*rows) << "\n";
    } else if (what == "epochs") {
        std::cout << toCsv(kEpochColumns, *rows);
    } else if (what == "providers") {
        std::cout << toCsv(kProviderColumns, flatProviders(*rows));
    } else {
        std::cout << toCsv(kTaskColumns, *rows);
    }
    return 0;
}

}  // namespace gridledger::node
