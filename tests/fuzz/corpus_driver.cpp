// Runs a fuzz target without libFuzzer: every file of its checked-in corpus, then a fixed number
// of deterministic mutations of each (byte flips, truncations, duplications). Used by ctest as a
// regression test; the `fuzz` preset links the real libFuzzer instead.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

constexpr int kMutationsPerFile = 2000;

void runOne(const std::vector<std::uint8_t>& input) {
    LLVMFuzzerTestOneInput(input.data(), input.size());
}

std::vector<std::uint8_t> mutate(std::vector<std::uint8_t> input, std::mt19937_64& rng) {
    switch (rng() % 4) {
        case 0:
            if (!input.empty()) {
                input[rng() % input.size()] ^= static_cast<std::uint8_t>(1U << (rng() % 8));
            }
            break;
        case 1:
            input.resize(input.empty() ? 0 : rng() % input.size());
            break;
        case 2:
            if (!input.empty()) {
                const auto at = rng() % input.size();
                input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), input.begin(),
                             input.begin() + static_cast<std::ptrdiff_t>(at));
            }
            break;
        default:
            input.push_back(static_cast<std::uint8_t>(rng()));
            break;
    }
    return input;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: " << argv[0] << " CORPUS_DIR\n";
        return 2;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(argv[1])) {
        files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::cerr << "empty corpus " << argv[1] << "\n";
        return 1;
    }
    std::mt19937_64 rng(0x6772696465ULL);
    std::size_t runs = 0;
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        const std::vector<std::uint8_t> seed((std::istreambuf_iterator<char>(in)),
                                             std::istreambuf_iterator<char>());
        runOne(seed);
        auto current = seed;
        for (int i = 0; i < kMutationsPerFile; ++i) {
            current = (i % 16 == 0) ? seed : mutate(current, rng);
            runOne(current);
            ++runs;
        }
    }
    std::cout << files.size() << " corpus files, " << runs << " mutated inputs: no crash\n";
    return 0;
}
