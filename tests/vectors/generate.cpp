// gridledger_vectors: writes the transaction test vectors (docs/encoding.md) to the file named by
// its argument, normally tests/vectors/transactions.json. Each run signs anew, and BIP-340 draws
// fresh auxiliary randomness for each signature: run it only when the cases or the encoding
// change, and commit the file. The C++ test and tests/vectors/check_vectors.py check it.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "vectors/cases.h"

namespace {

/** JSON with two-space indents, one member or element per line, keys in insertion order. */
void pretty(std::ostream& out, const boost::json::value& value, int indent) {
    const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
    const std::string closing(static_cast<std::size_t>(indent), ' ');
    if (value.is_object() && !value.as_object().empty()) {
        out << "{\n";
        bool first = true;
        for (const auto& [key, member] : value.as_object()) {
            out << (first ? "" : ",\n") << pad << boost::json::serialize(boost::json::string(key))
                << ": ";
            pretty(out, member, indent + 2);
            first = false;
        }
        out << "\n" << closing << "}";
    } else if (value.is_array() && !value.as_array().empty()) {
        out << "[\n";
        bool first = true;
        for (const auto& element : value.as_array()) {
            out << (first ? "" : ",\n") << pad;
            pretty(out, element, indent + 2);
            first = false;
        }
        out << "\n" << closing << "]";
    } else {
        out << boost::json::serialize(value);
    }
}

}  // namespace

int main(int argc, char** argv) {
    using namespace gridledger;
    if (argc != 2) {
        std::cerr << "usage: gridledger_vectors OUTPUT.json\n";
        return 2;
    }
    const std::string domain = crypto::chainDomain(vectors::kChainId, vectors::genesisHash());
    boost::json::array all;
    for (const auto& c : vectors::cases()) {
        boost::json::object v = vectors::unsignedVector(c);
        const codec::SignedTx tx = codec::signTx(c.body, vectors::keyNamed(c.signer), domain);
        v["signature"] = tx.signature.hex();
        v["tx_hex"] = toHex(tx.raw);
        v["tx_hash"] = tx.hash.hex();
        all.push_back(std::move(v));
    }
    const boost::json::object file{
        {"description",
         "GridLedger transaction test vectors: docs/encoding.md says how each value is computed"},
        {"chain_id", vectors::kChainId},
        {"genesis_hash", vectors::genesisHash().hex()},
        {"signing_domain", toHex(asBytes(domain))},
        {"tx_signing_tag", crypto::kTxTag},
        {"vectors", std::move(all)}};
    std::ofstream out(argv[1]);
    pretty(out, file, 0);
    out << "\n";
    if (!out) {
        std::cerr << "gridledger_vectors: cannot write " << argv[1] << "\n";
        return 1;
    }
    return 0;
}
