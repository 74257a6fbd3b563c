#!/usr/bin/env bash
# Installs the Debian 12 packages GridLedger builds with. Does nothing when they are present.
set -euo pipefail

packages=(
    build-essential cmake pkg-config git
    libboost1.81-all-dev libboost-json1.81-dev
    libssl-dev librocksdb-dev libsecp256k1-dev libjemalloc-dev
    libprotobuf-dev protobuf-compiler
    libspdlog-dev libfmt-dev prometheus-cpp-dev
    libgtest-dev libgmock-dev libbenchmark-dev
    clang-format clang-tidy python3
    # make test's checks of deploy/ and docker/: promtool, a node exporter to scrape, yamllint,
    # systemd-analyze, docker-compose (its config check needs no engine)
    prometheus prometheus-node-exporter yamllint systemd docker-compose
    # and the container engine that builds the node's image and runs docker/compose.yml's
    # network: podman with runc (crun refuses cgroups v1 in hybrid mode), its network stack and
    # DNS (the validators dial each other by name), and mmdebstrap, which makes the base image
    # from Debian packages where no image registry is reachable
    podman runc netavark aardvark-dns iptables mmdebstrap
    wrk  # the HTTP load of make bench's JSON-RPC read run (bench/wrk/)
    chromium  # the headless browser of the explorer's browser tests (explorer/test)
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm run the OpenRPC conformance test's tools (tests/openrpc) and the Kubernetes and
# Dockerfile checkers (tests/deploy/tools). A Node.js that brings
# its own npm serves as well as Debian's packages, which would conflict with it.
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Where systemd runs, Debian starts the daemons of prometheus and prometheus-node-exporter on
# install. The tests need neither (they start their own node exporter on a free port): stop and
# disable the ones installed here.
if [ -d /run/systemd/system ]; then
    for unit in prometheus prometheus-node-exporter; do
        if [[ " ${missing[*]} " == *" $unit "* ]]; then
            "${sudo_cmd[@]}" systemctl disable --now "$unit.service" || true
        fi
    done
fi
