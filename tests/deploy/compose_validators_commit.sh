#!/usr/bin/env bash
# deploy_compose_validators_commit (docs/operations.md, "What `make test` checks here"): the
# node's image, built with a real container engine around the binary make test built, runs the
# 4-validator network of docker/compose.yml, and the network commits.
#
#   compose_validators_commit.sh GRIDLEDGER REPOSITORY WORKDIR
#
# 1. Probe: podman runs a container of /bin/true; where it cannot, no container engine runs on
#    this machine: say why and exit 77 (ctest's SKIP_RETURN_CODE for this test).
# 2. The runtime base, Debian 12 minbase from Debian packages (mmdebstrap, as in "Air-gapped"),
#    imported as gridledger-base:12-slim; kept between runs (podman rmi it to refresh).
# 3. The image: docker/stage-binary.sh stages GRIDLEDGER and its libraries, docker/Dockerfile
#    builds the runtime stage around them (--build-arg BINARY_FROM=prebuilt).
# 4. The network: docker-compose drives podman through podman's Docker-compatible API and starts
#    validator-0..3 of docker/compose.yml (the testnet service first writes their homes).
# 5. Asserts: every validator's published JSON-RPC (127.0.0.1:8545..8548) answers /livez and
#    reaches height 5, all four return the same block and state root at height 5, each
#    validator's HEALTHCHECK passes, run by podman inside its container, and the node runs as
#    uid 10001 (gridledger), not root.
# Every container, network and volume of the compose project and the image built are removed on
# exit, failure included; a run killed before that is cleaned up by the next one. The project,
# image and ports are the same for every run on the machine, so runs take turns: each holds a
# lock file in the temporary directory from step 1 to its cleanup.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 GRIDLEDGER REPOSITORY WORKDIR" >&2
    exit 2
fi
binary=$(realpath "$1")
repo=$(realpath "$2")
work=$3

readonly skip=77
readonly project=gridledger-deploy-test
readonly image=localhost/gridledger:deploy-test
readonly base=localhost/gridledger-base:12-slim
readonly ports=(8545 8546 8547 8548)
readonly validators=(validator-0 validator-1 validator-2 validator-3)
readonly height=5
readonly commit_timeout=180

step() { echo "[${SECONDS}s] $*"; }

mkdir -p "$work"
work=$(realpath "$work")
# Two runs at once (two checkouts testing on one machine) would each remove the other's containers
# as leftovers. The lock is released when this shell exits, after the cleanup.
exec {lock}>"${TMPDIR:-/tmp}/gridledger-deploy-test.lock"
if ! flock --nonblock "$lock"; then
    step "waiting for another run of this test on the machine to end"
    flock "$lock"
fi
# podman's defaults set ulimits a container may not raise where the test runs without
# CAP_SYS_RESOURCE, and crun refuses cgroups v1 in hybrid mode: no default ulimits, and runc.
# A CONTAINERS_CONF already set is kept.
if [ -z "${CONTAINERS_CONF:-}" ]; then
    cat >"$work/containers.conf" <<'EOF'
[containers]
default_ulimits = []

[engine]
runtime = "runc"
EOF
    export CONTAINERS_CONF="$work/containers.conf"
fi

# 1. The probe: a container whose root file system is /bin/true and the libraries it loads.
if ! command -v podman >/dev/null; then
    echo "SKIP: podman is not installed (scripts/install-deps.sh installs it): no container engine"
    exit "$skip"
fi
probe="$work/probe"
rm -rf "$probe"
mkdir -p "$probe"
for file in /bin/true $(ldd /bin/true | grep -o '/[^ ]*'); do
    cp -L --parents "$file" "$probe"
done
if ! probe_output=$(podman run --rm --rootfs "$probe" /bin/true 2>&1); then
    rm -rf "$probe"
    echo "$probe_output"
    echo "SKIP: podman cannot run a container on this machine (above): no container engine"
    exit "$skip"
fi
rm -rf "$probe"

service_pid=""
compose=(env DOCKER_HOST="unix://$work/podman.sock" GRIDLEDGER_IMAGE="$image"
    docker-compose --ansi never -p "$project" -f "$repo/docker/compose.yml")

# The compose project's containers, volumes and network, by the label docker-compose puts on them.
remove_project() {
    local label="label=com.docker.compose.project=$project"
    podman ps -aq --filter "$label" | xargs -r podman rm -f -t 0 >/dev/null
    podman volume ls -q --filter "$label" | xargs -r podman volume rm -f >/dev/null
    podman network ls -q --filter "$label" | xargs -r podman network rm -f >/dev/null
}

cleanup() {
    local status=$?
    set +e
    if [ -n "$service_pid" ]; then
        if [ "$status" -ne 0 ]; then
            "${compose[@]}" ps
            "${compose[@]}" logs --no-color --tail=30
        fi
        "${compose[@]}" down -v --remove-orphans -t 5 >/dev/null 2>&1
        kill "$service_pid"
        wait "$service_pid" 2>/dev/null
        if [ "$status" -ne 0 ]; then
            tail -n 30 "$work/podman-service.log"
        fi
    fi
    remove_project
    podman rmi -f "$image" >/dev/null 2>&1
    rm -rf "$work/context" "$work/rootfs.tar" "$work/podman.sock" "$work/probe"
    step "cleaned up"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

remove_project
for port in "${ports[@]}"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        echo "FAIL: 127.0.0.1:$port, which docker/compose.yml publishes, is taken"
        exit 1
    fi
done

# 2. The runtime base.
if podman image exists "$base"; then
    step "base image $base present"
else
    # From deb.debian.org (mmdebstrap's default), or the mirror GRIDLEDGER_DEBIAN_MIRROR names.
    mirror=()
    if [ -n "${GRIDLEDGER_DEBIAN_MIRROR:-}" ]; then
        mirror=("$GRIDLEDGER_DEBIAN_MIRROR")
    fi
    step "base image $base: mmdebstrap --variant=minbase bookworm ${mirror[*]}"
    timeout 480 mmdebstrap --quiet --variant=minbase bookworm "$work/rootfs.tar" "${mirror[@]}"
    podman import --quiet "$work/rootfs.tar" "$base" >/dev/null
    rm -f "$work/rootfs.tar"
fi

# 3. The image. The docker format keeps HEALTHCHECK (the OCI format has no field for it).
step "image $image from $binary"
rm -rf "$work/context"
"$repo/docker/stage-binary.sh" "$binary" "$work/context"
timeout 180 podman build --quiet --format docker --pull=never --layers=false \
    --build-arg RUNTIME_IMAGE="$base" --build-arg BINARY_FROM=prebuilt \
    -f "$repo/docker/Dockerfile" -t "$image" "$work/context" >/dev/null
rm -rf "$work/context"

# 4. The network.
step "podman's Docker API on $work/podman.sock"
rm -f "$work/podman.sock"
# It ends after 300 s without a client, should this script be killed before it can stop it. Its
# log (podman-service.log) is shown on failure only: without systemd, podman logs an error for
# every container whose HEALTHCHECK it cannot schedule with a timer (the test runs it below).
podman system service --time=300 "unix://$work/podman.sock" >"$work/podman-service.log" 2>&1 &
service_pid=$!
for _ in $(seq 100); do
    [ -S "$work/podman.sock" ] && break
    sleep 0.1
done
step "docker-compose up ${validators[*]}"
timeout 180 "${compose[@]}" up -d --no-build "${validators[@]}"

# 5. The asserts.
step "waiting for height $height on 127.0.0.1:${ports[*]}"
python3 - "$height" "$commit_timeout" "${ports[@]}" <<'EOF'
import json
import sys
import time
import urllib.request

height, timeout, ports = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]


def get(port, path, body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.read()


def rpc(port, method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    answer = json.loads(get(port, "/", body.encode())[1])
    if "result" not in answer:
        raise RuntimeError(f"{method} on {port}: {answer}")
    return answer["result"]


deadline = time.monotonic() + timeout
heads = {}
while True:
    for port in ports:
        try:
            heads[port] = int(rpc(port, "chain_getHead", [])["height"])
        except (OSError, ValueError, RuntimeError) as error:
            heads[port] = f"no answer ({error})"
    if all(isinstance(h, int) and h >= height for h in heads.values()):
        break
    if time.monotonic() > deadline:
        sys.exit(f"FAIL: not every validator reached height {height} in {timeout:.0f} s: {heads}")
    time.sleep(1)
print(f"heights: {heads}")

for port in ports:
    try:
        status, body = get(port, "/livez")
    except OSError as error:  # urllib raises for any status but 2xx
        sys.exit(f"FAIL: /livez on {port}: {error}")
    if status != 200:
        sys.exit(f"FAIL: /livez on {port} answered {status} {body!r}")
blocks = {port: rpc(port, "block_get", [str(height)]) for port in ports}
seen = {(b["header"]["id"], b["state_root"]) for b in blocks.values()}
if len(seen) != 1:
    sys.exit(f"FAIL: the validators disagree at height {height}: {blocks}")
block_id, state_root = seen.pop()
print(f"/livez 200 on every port; height {height}: block {block_id}, state root {state_root} "
      "on every validator")
EOF

for validator in "${validators[@]}"; do
    container=$("${compose[@]}" ps -q "$validator")
    if ! podman healthcheck run "$container" >/dev/null; then
        echo "FAIL: $validator's HEALTHCHECK failed"
        exit 1
    fi
    # The node is the container's process 1.
    uid=$(podman exec "$container" awk '/^Uid:/ { print $2 }' /proc/1/status)
    if [ "$uid" != 10001 ]; then
        echo "FAIL: $validator runs as uid $uid, not gridledger (10001)"
        exit 1
    fi
    echo "$validator: HEALTHCHECK $(podman inspect --format '{{.State.Health.Status}}' \
        "$container"), uid $uid"
done
step "PASS: the 4 validators of docker/compose.yml commit in containers"
