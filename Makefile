# The two commands of the README, plus helpers. Both install what they need first.
BUILD_DIR ?= build/release
JOBS ?= $(shell nproc)
HOME_DIR ?= $(or $(GRIDLEDGER_HOME),$(HOME)/.gridledger)
CMAKE_FLAGS ?=

.PHONY: run test deps build explorer localnet bench format format-check asan-test tsan-test fuzz tidy clean

deps:
	@scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DGRIDLEDGER_TESTS=OFF -DGRIDLEDGER_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD_DIR) --target gridledger -j $(JOBS)

## make run: build and start a 1-validator dev node (initialises its home on first run).
run: build
	@[ -f "$(HOME_DIR)/config/genesis.json" ] || $(BUILD_DIR)/bin/gridledger init --home "$(HOME_DIR)"
	exec $(BUILD_DIR)/bin/gridledger start --home "$(HOME_DIR)"

## make explorer: build the web explorer (docs/explorer.md) into build/explorer, the directory to
## name as explorer_dir in the [rpc] section of a node's config/node.conf.
explorer: deps
	cd explorer && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build -- $(CURDIR)/build/explorer

## make localnet: build, then run a 4-validator network on 127.0.0.1 from build/localnet (written
## by `gridledger testnet` on first use); Ctrl-C stops every node.
localnet: build
	exec scripts/localnet.sh $(BUILD_DIR)/bin/gridledger build/localnet

## make test: check the formatting, build everything with warnings as errors and run every test,
## then the unit and simulator tests again under ASan + UBSan.
## Both builds keep line tables only (-g1): stack traces and sanitizer reports still give file and
## line, and the build takes about half the time of full debug information. Both compile the
## libraries and the unit and simulator test executables as unity builds
## (GRIDLEDGER_UNITY_BUILD: eight sources per compiler run), which parses their shared headers
## once per batch instead of once per source.
## ctest runs twice as many tests at a time as there are cores (TEST_JOBS): most integration
## tests wait on block times and use a fraction of a core, so at -j 2 the cores sat 40 % idle
## (733 s of CPU in 611 s of wall on two); at -j 4 the run took 499 s. The sanitizer build's
## tests use their core to the full and run at -j $(JOBS). Tests running side by side never share
## a port: each test process claims blocks of ports with a file lock under the temporary
## directory (tests/support/process.h, freePortRange), held until it ends. Every node a test or
## a benchmark starts dies with the process that started it, even when that process crashes, so
## that none is left holding its ports and a share of the cores (tests/support/process.cpp).
LINE_TABLES = "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
UNITY = -DGRIDLEDGER_UNITY_BUILD=ON
TEST_JOBS ?= $(shell echo $$(( 2 * $(JOBS) )))
test: deps format-check
	cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRIDLEDGER_WERROR=ON $(LINE_TABLES) \
		$(UNITY) $(CMAKE_FLAGS) >/dev/null
	cmake --build build/test -j $(JOBS)
	cd build/test && ctest --output-on-failure -j $(TEST_JOBS)
	$(MAKE) --no-print-directory asan-test

## make asan-test: the unit and simulator tests built with AddressSanitizer and
## UndefinedBehaviorSanitizer, at -Og: with both sanitizers the libraries compile in about half
## the time -O1 takes (843 s against 1,563 s of compiler time on two cores), while the tests run
## up to 15 % longer (ctest 483 and 556 s in two runs at -Og, 488 s at -O1). The simulator's
## negative controls (label `controls`) test the checker, not the code, and run in the plain
## build only.
## ASAN_LABELS='unit|sim|integration|e2e' also builds the node binary, which the integration and
## end-to-end tests start as real processes, and runs those tests too (22 minutes on two cores at -O2
## for every label, the extra build included). Every process, each node included, writes its
## reports under build/asan/reports; any report fails the target and is printed.
## GCC 12 reports std::regex internals as maybe-uninitialized once -fsanitize=address instruments
## them, a false positive of that warning under sanitizers: it is off in this build only.
ASAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
	-Wno-maybe-uninitialized
ASAN_LINE_TABLES = "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG"
ASAN_LABELS ?= unit|sim
## The simulator's seeded sweeps run every fourth seed here (the plain build runs them all): the
## instrumented runs look for memory and undefined-behaviour errors, which that sample finds too.
ASAN_SIM_SEED_DIVISOR ?= 4
ASAN_UNIT_TARGETS = --target base_unit_test ledger_unit_test consensus_unit_test \
	contracts_unit_test rpc_unit_test p2p_unit_test node_unit_test sim_test floors_test ports_test
asan-test: deps
	cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRIDLEDGER_WERROR=ON \
		-DGRIDLEDGER_BENCH=OFF -DGRIDLEDGER_JEMALLOC=OFF "-DCMAKE_CXX_FLAGS=$(ASAN_FLAGS)" $(ASAN_LINE_TABLES) \
		$(UNITY) $(CMAKE_FLAGS) >/dev/null
	cmake --build build/asan -j $(JOBS) $(if $(filter unit|sim,$(ASAN_LABELS)),$(ASAN_UNIT_TARGETS))
	rm -rf build/asan/reports && mkdir -p build/asan/reports
	cd build/asan && \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:log_path=$(CURDIR)/build/asan/reports/asan \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$(CURDIR)/build/asan/reports/ubsan \
		GRIDLEDGER_SIM_SEED_DIVISOR=$(ASAN_SIM_SEED_DIVISOR) \
		ctest --output-on-failure -j $(JOBS) -L '$(ASAN_LABELS)'; status=$$?; \
		if ls reports/* >/dev/null 2>&1; then cat reports/*; exit 1; fi; exit $$status

## make tsan-test: the unit, simulator, integration and end-to-end tests, and the node they start,
## built with ThreadSanitizer (not part of make test: the build and the run take about 30 minutes on
## two cores). Every process writes its reports under build/tsan/reports; any report fails the
## target. TSan checks the memory accesses of GridLedger's own, instrumented code, and of the
## calls it intercepts (memcpy, memcmp, ...) from that code, not from the uninstrumented
## libraries (whose locks it still follows): RocksDB is linked here as Debian's shared library,
## so that TSan can tell its code apart. tests/tsan.supp names the code TSan cannot see into; the
## longest access history keeps the stacks of old writes, which the suppressions match against.
## GCC warns (-Wtsan) that ThreadSanitizer does not model std::atomic_thread_fence, which
## Boost.Asio's completion handlers use: that warning is off in this build only.
TSAN_FLAGS = -fsanitize=thread -fno-omit-frame-pointer -Wno-maybe-uninitialized -Wno-tsan
tsan-test: deps
	cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRIDLEDGER_WERROR=ON \
		-DGRIDLEDGER_BENCH=OFF -DGRIDLEDGER_JEMALLOC=OFF -DGRIDLEDGER_SHARED_ROCKSDB=ON "-DCMAKE_CXX_FLAGS=$(TSAN_FLAGS)" $(LINE_TABLES) $(CMAKE_FLAGS) >/dev/null
	cmake --build build/tsan -j $(JOBS)
	rm -rf build/tsan/reports && mkdir -p build/tsan/reports
	cd build/tsan && TSAN_OPTIONS=log_path=$(CURDIR)/build/tsan/reports/tsan:second_deadlock_stack=1:history_size=7:ignore_noninstrumented_modules=1:suppressions=$(CURDIR)/tests/tsan.supp \
		ctest --output-on-failure -j $(JOBS) -L 'unit|sim|integration|e2e'
	@if ls build/tsan/reports/tsan.* >/dev/null 2>&1; then \
		echo "ThreadSanitizer reports:"; ls build/tsan/reports; exit 1; fi

## make fuzz: every libFuzzer target for FUZZ_SECONDS (default 600) under ASan + UBSan (clang-16),
## one after the other, from its checked-in corpus; new inputs go to build/fuzz/work, a finding
## to build/fuzz/work/<target>/crash-* and fails the target.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS = tx_decode block_decode proof_decode rpc_dispatch p2p_envelope sync_request \
	sync_response block_request tx_batch batch commit_proof
fuzz: deps
	@command -v clang++-16 >/dev/null && [ -d /usr/lib/llvm-16/lib/clang/16/lib/linux ] || { \
		sudo_cmd=$$([ "$$(id -u)" -ne 0 ] && echo sudo); \
		$$sudo_cmd apt-get install -y -qq clang-16 libclang-rt-16-dev; }
	cmake --preset fuzz >/dev/null
	cmake --build build/fuzz -j $(JOBS) $(addprefix --target fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p build/fuzz/work/$$t; \
		echo "fuzz_$$t: $(FUZZ_SECONDS) s"; \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 build/fuzz/tests/fuzz/fuzz_$$t \
			-max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
			-artifact_prefix=build/fuzz/work/$$t/ build/fuzz/work/$$t tests/fuzz/corpus/$$t \
			2> build/fuzz/work/$$t.log || { tail -40 build/fuzz/work/$$t.log; exit 1; }; \
		grep -E '^stat::number_of_executed_units' build/fuzz/work/$$t.log; \
	done

## make format-check: fails when a tracked C++ file differs from clang-format's output.
format-check: deps
	git ls-files '*.cpp' '*.h' | xargs clang-format --dry-run -Werror

## make bench: release build of the benchmarks and the node load generator, then run them all
## and print one table of every figure, its ratio and its target (scripts/bench.py).
bench: deps
	cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	cmake --build build/bench -j $(JOBS) --target gridledger gridledger_node_load gridledger_join_load \
		gridledger_crypto_bench gridledger_mempool_bench gridledger_executor_bench gridledger_state_tree_bench \
		gridledger_task_admission_bench gridledger_accounts_bench gridledger_wan_sim
	python3 scripts/bench.py build/bench

format:
	git ls-files '*.cpp' '*.h' | xargs clang-format -i

## make tidy: clang-tidy over the project's sources (clang-tidy-16; it reads C++23 as c++2b and
## needs the concepts level that libstdc++ 12 checks before it offers std::expected). The static
## analyzer runs in its shallow mode: in the deep mode it ran for more than half an hour on
## contracts/task_contract.cpp alone.
tidy: deps
	@command -v clang-tidy-16 >/dev/null || sudo_cmd=$$([ "$$(id -u)" -ne 0 ] && echo sudo); $$sudo_cmd apt-get install -y -qq clang-tidy-16
	cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRIDLEDGER_WERROR=ON $(LINE_TABLES) $(CMAKE_FLAGS) >/dev/null
	mkdir -p build/tidy && sed 's/-std=c++23/-std=c++2b/g' build/test/compile_commands.json > build/tidy/compile_commands.json
	git ls-files '*.cpp' | grep -v '^tests/fuzz/' | xargs -P $(JOBS) -n 4 clang-tidy-16 -p build/tidy --quiet \
		--extra-arg=-Wno-builtin-macro-redefined --extra-arg=-U__cpp_concepts --extra-arg=-D__cpp_concepts=202002L \
		--extra-arg=-Xclang --extra-arg=-analyzer-config --extra-arg=-Xclang --extra-arg=mode=shallow

clean:
	rm -rf build
