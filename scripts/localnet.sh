#!/usr/bin/env bash
# Runs a 4-validator GridLedger network on 127.0.0.1 until Ctrl-C or SIGTERM.
#
#   scripts/localnet.sh BIN [DIR]
#
# BIN is the gridledger binary, DIR the network's directory (default build/localnet). On the first
# run `gridledger testnet --validators 4` writes the homes DIR/node0..node3; later runs reuse them
# and their chain (remove DIR to start afresh). Node i logs to DIR/node<i>.log. On SIGINT or
# SIGTERM every node gets SIGTERM and the script waits for all of them before it exits 0.
set -euo pipefail

bin=${1:?usage: scripts/localnet.sh BIN [DIR]}
dir=${2:-build/localnet}
validators=4

if [ ! -e "$dir" ]; then
    "$bin" testnet --validators "$validators" --out "$dir"
fi

homes=()
for ((i = 0; ; i++)); do
    [ -f "$dir/node$i/config/genesis.json" ] || break
    homes+=("$dir/node$i")
done
if [ "${#homes[@]}" -eq 0 ]; then
    echo "localnet: $dir holds no node homes; remove it and run again" >&2
    exit 1
fi

pids=()
stop_all() {
    trap '' INT TERM
    echo "localnet: stopping ${#pids[@]} nodes"
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    local failed=0
    for pid in "${pids[@]}"; do
        wait "$pid" || failed=1
    done
    return "$failed"
}
# shellcheck disable=SC2317  # runs from the trap
on_signal() {
    stop_all || true
    echo "localnet: stopped"
    exit 0
}
trap on_signal INT TERM

# The [section] key of an INI file, e.g. ini_value node.conf rpc port.
ini_value() {
    awk -F ' *= *' -v section="[$2]" -v key="$3" \
        '/^\[/ { in_section = ($0 == section) } in_section && $1 == key { print $2; exit }' "$1"
}

for i in "${!homes[@]}"; do
    "$bin" start --home "${homes[$i]}" >>"$dir/node$i.log" 2>&1 &
    pids+=("$!")
done

echo "localnet: ${#pids[@]} validators running from $dir (logs in $dir/node<i>.log)"
for i in "${!homes[@]}"; do
    conf="${homes[$i]}/config/node.conf"
    echo "  node$i  pid ${pids[$i]}  rpc http://$(ini_value "$conf" rpc address):$(ini_value "$conf" rpc port)"
done
echo "localnet: Ctrl-C stops them all"

# Until a signal arrives (on_signal exits) or a node exits by itself.
wait -n "${pids[@]}" || true
echo "localnet: a node exited by itself; see $dir/node<i>.log" >&2
stop_all || true
exit 1
