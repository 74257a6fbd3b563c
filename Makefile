# The two commands of the README, plus helpers. Both install what they need first.
BUILD_DIR ?= build/release
JOBS ?= $(shell nproc)
HOME_DIR ?= $(or $(GRIDLEDGER_HOME),$(HOME)/.gridledger)
CMAKE_FLAGS ?=

.PHONY: run test deps build build-test format tidy clean

deps:
	@scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DGRIDLEDGER_TESTS=OFF -DGRIDLEDGER_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD_DIR) --target gridledger -j $(JOBS)

## make run: build and start a 1-validator dev node (initialises its home on first run).
run: build
	@[ -f "$(HOME_DIR)/config/genesis.json" ] || $(BUILD_DIR)/bin/gridledger init --home "$(HOME_DIR)"
	exec $(BUILD_DIR)/bin/gridledger start --home "$(HOME_DIR)"

## make test: build everything with warnings as errors and run every test.
test: deps
	cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRIDLEDGER_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	cmake --build build/test -j $(JOBS)
	cd build/test && ctest --output-on-failure -j $(JOBS)

format:
	git ls-files '*.cpp' '*.h' | xargs clang-format -i

tidy:
	git ls-files '*.cpp' | grep -v '^tests/fuzz/' | xargs clang-tidy -p build/test --quiet

clean:
	rm -rf build
