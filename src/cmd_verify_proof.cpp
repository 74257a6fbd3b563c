// gridledger verify-proof: checks a state proof offline, without a node (docs/rpc.md,
// state_getProof; the format and the algorithm are in docs/state_tree.md).

#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>

#include <boost/json.hpp>

#include <gridledger/ledger/state_tree.h>

#include "cli_options.h"

namespace gridledger::node {
namespace po = boost::program_options;
namespace json = boost::json;

namespace {

/** The exit code of a proof that does not verify (0 is a valid one, 2 a usage error). */
constexpr int kInvalid = 1;
constexpr int kUsageError = 2;

/** The flags, each possibly empty; --json fills those the command line left empty. */
struct ProofInput {
    std::string root;
    std::string key;
    std::string proof;
    std::string value;
    bool absent = false;
};

Result<std::string> readAll(const std::string& path) {
    if (path == "-") {
        return std::string(std::istreambuf_iterator<char>(std::cin), {});
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return fail(ErrorCode::kIo, "cannot read " + path);
    }
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/** Fills the empty fields of `input` from a state_getProof result (or a response holding one). */
Status fillFromJson(const std::string& text, ProofInput& input) {
    boost::system::error_code ec;
    json::value parsed = json::parse(text, ec);
    if (ec || !parsed.is_object()) {
        return fail(ErrorCode::kMalformed, "--json: not a JSON object");
    }
    const json::object* result = &parsed.get_object();
    if (const auto* inner = result->if_contains("result"); inner != nullptr && inner->is_object()) {
        result = &inner->get_object();
    }
    const auto take = [result](std::string_view name, std::string& into) -> Status {
        const json::value* field = result->if_contains(name);
        if (field == nullptr || !into.empty() || field->is_null()) {
            return {};
        }
        if (!field->is_string()) {
            return fail(ErrorCode::kMalformed,
                        "--json: \"" + std::string(name) + "\" must be a string");
        }
        into = std::string(field->get_string());
        return {};
    };
    GL_TRY(take("state_root", input.root));
    GL_TRY(take("key", input.key));
    GL_TRY(take("proof", input.proof));
    if (input.value.empty() && !input.absent) {
        const json::value* field = result->if_contains("value");
        if (field == nullptr || field->is_null()) {
            input.absent = true;
        } else {
            GL_TRY(take("value", input.value));
        }
    }
    return {};
}

}  // namespace

int runVerifyProof(const Args& args) {
    std::string homeFlag;
    std::string jsonPath;
    ProofInput input;
    po::options_description desc(
        "gridledger verify-proof --root 0x… --key 0x… --proof 0x… [--value 0x… | --absent]\n"
        "gridledger verify-proof --json FILE|- [--root 0x…]\n"
        "Checks a state_getProof proof offline: prints valid (exit 0) or invalid (exit 1)");
    desc.add_options()("root", po::value(&input.root), "trusted state root (0x, 32 bytes)")(
        "key", po::value(&input.key), "state key (0x, 32 bytes)")("proof", po::value(&input.proof),
                                                                  "proof bytes (0x)")(
        "value", po::value(&input.value), "claimed value (0x): checks inclusion")(
        "absent", po::bool_switch(&input.absent), "claims the key has no value: non-inclusion")(
        "json", po::value(&jsonPath),
        "a state_getProof result (or its response) in FILE, - for stdin; flags given on the "
        "command line take precedence over its fields");
    int exitCode = 0;
    if (!parseOptions("verify-proof", desc, {}, args, homeFlag, exitCode)) {
        return exitCode;
    }
    if (!input.value.empty() && input.absent) {
        std::cerr << "gridledger verify-proof: --value and --absent exclude each other\n";
        return kUsageError;
    }
    if (!jsonPath.empty()) {
        auto text = readAll(jsonPath);
        const Status filled =
            text ? fillFromJson(*text, input) : Status(std::unexpected(text.error()));
        if (!filled) {
            std::cerr << "gridledger verify-proof: " << filled.error().message << "\n";
            return kUsageError;
        }
    }
    if (input.root.empty() || input.key.empty() || input.proof.empty()) {
        std::cerr << "gridledger verify-proof: --root, --key and --proof are required (or --json)\n"
                  << desc;
        return kUsageError;
    }
    auto root = Hash256::fromHex(input.root);
    auto key = Hash256::fromHex(input.key);
    auto proofBytes = fromHex(input.proof);
    std::optional<Bytes> claimed;
    if (!input.value.empty()) {
        auto value = fromHex(input.value);
        if (!value) {
            std::cerr << "gridledger verify-proof: --value: " << value.error().message << "\n";
            return kUsageError;
        }
        claimed = std::move(*value);
    }
    if (!root || !key || !proofBytes) {
        const Error& error = !root ? root.error() : !key ? key.error() : proofBytes.error();
        std::cerr << "gridledger verify-proof: " << error.message << "\n";
        return kUsageError;
    }
    const std::string claim = claimed ? "inclusion of " + input.key + " = " + toHex(*claimed)
                                      : "non-inclusion of " + input.key;
    auto proof = ledger::decodeProof(*proofBytes);
    if (!proof) {
        std::cout << "invalid: malformed proof: " << proof.error().message << "\n";
        return kInvalid;
    }
    if (!ledger::verifyProof(*root, *key, claimed, *proof)) {
        std::cout << "invalid: the proof does not show " << claim << " under root " << root->hex()
                  << "\n";
        return kInvalid;
    }
    std::cout << "valid: " << claim << " under root " << root->hex() << "\n";
    return 0;
}

}  // namespace gridledger::node
