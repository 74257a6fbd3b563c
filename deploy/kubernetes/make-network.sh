#!/usr/bin/env bash
# Writes <overlay>/network.yaml for an N-validator network on Kubernetes (docs/operations.md,
# "Run on Kubernetes"): `gridledger testnet --hostnames` with pod i's stable name
# gridledger-<i>.gridledger-p2p, then the genesis and every node.conf as the ConfigMap
# gridledger-config and every node's keys as the Secret gridledger-keys. With
# GRIDLEDGER_KEY_PASSPHRASE set, the keys are encrypted under it, every node.conf reads it from
# that environment variable, and the Secret gridledger-passphrase holds it for the pods.
#   usage: make-network.sh N OVERLAY_DIR   (GRIDLEDGER: the binary, default gridledger)
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 N OVERLAY_DIR" >&2
    exit 2
fi
n=$1
overlay=$2
bin=${GRIDLEDGER:-gridledger}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

hosts=()
for ((i = 0; i < n; i++)); do
    hosts+=("gridledger-$i.gridledger-p2p")
done
"$bin" testnet --validators "$n" --out "$work/net" --hostnames "$(IFS=,; echo "${hosts[*]}")" \
    --port-offset 0 --p2p-port 26656 --rpc-port 8545 --metrics-port 9464 --admin-port 8546 \
    ${GRIDLEDGER_KEY_PASSPHRASE:+--encrypt} >"$work/testnet.out"

# The RPC Service's name is a Host the nodes accept besides their own; the log lines are JSON,
# for the cluster's log collector.
for ((i = 0; i < n; i++)); do
    sed -i -e "s/^allowed_hosts = \(.*\)$/allowed_hosts = \1,gridledger-rpc/" \
        -e "s/^format = text$/format = json/" "$work/net/node$i/config/node.conf"
done

indent() { awk '{ print "    " $0 }'; }
{
    echo "---"
    echo "# Written by make-network.sh: the genesis and each validator's node.conf."
    echo "apiVersion: v1"
    echo "kind: ConfigMap"
    echo "metadata:"
    echo "  name: gridledger-config"
    echo "  labels:"
    echo "    app.kubernetes.io/name: gridledger"
    echo "data:"
    echo "  genesis.json: |"
    indent <"$work/net/node0/config/genesis.json"
    for ((i = 0; i < n; i++)); do
        echo "  node$i.conf: |"
        indent <"$work/net/node$i/config/node.conf"
    done
    echo "---"
    echo "# Written by make-network.sh: each validator's keys, node<i>-<name>.key."
    echo "apiVersion: v1"
    echo "kind: Secret"
    echo "metadata:"
    echo "  name: gridledger-keys"
    echo "  labels:"
    echo "    app.kubernetes.io/name: gridledger"
    echo "type: Opaque"
    echo "data:"
    for ((i = 0; i < n; i++)); do
        for key in validator validator-account node; do
            echo "  node$i-$key.key: $(base64 -w0 <"$work/net/node$i/keys/$key.key")"
        done
    done
    if [ -n "${GRIDLEDGER_KEY_PASSPHRASE:-}" ]; then
        echo "---"
        echo "# Written by make-network.sh: the passphrase of the encrypted keys."
        echo "apiVersion: v1"
        echo "kind: Secret"
        echo "metadata:"
        echo "  name: gridledger-passphrase"
        echo "  labels:"
        echo "    app.kubernetes.io/name: gridledger"
        echo "type: Opaque"
        echo "data:"
        echo "  passphrase: $(printf '%s' "$GRIDLEDGER_KEY_PASSPHRASE" | base64 -w0)"
    fi
} >"$overlay/network.yaml"
chmod 600 "$overlay/network.yaml"
keys=plain
[ -z "${GRIDLEDGER_KEY_PASSPHRASE:-}" ] || keys=encrypted
echo "wrote $overlay/network.yaml ($n validators, keys $keys)"
