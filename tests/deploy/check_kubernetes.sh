#!/usr/bin/env bash
# Renders every overlay of deploy/kubernetes with the network make-network.sh writes from the
# built binary, and validates every object (check-kubernetes.mjs), in a copy of the folder so
# that the source tree gets no keys. The first overlay's keys are encrypted under a passphrase,
# the others' plain: both forms are checked.
#   usage: check_kubernetes.sh GRIDLEDGER_BIN SOURCE_DIR TOOLS_DIR
set -euo pipefail
bin=$1
source=$2
tools=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$source/deploy/kubernetes" "$work/kubernetes"
rm -f "$work"/kubernetes/overlays/*/network.yaml
overlays=()
for overlay in "$work"/kubernetes/overlays/*-validators; do
    n=$(basename "$overlay")
    n=${n%%-validators}
    if [ ${#overlays[@]} -eq 0 ]; then
        GRIDLEDGER=$bin GRIDLEDGER_KEY_PASSPHRASE=check-kubernetes \
            "$work/kubernetes/make-network.sh" "$n" "$overlay"
        grep -q "kind: Secret" "$overlay/network.yaml"
        grep -q "name: gridledger-passphrase" "$overlay/network.yaml"
    else
        GRIDLEDGER_KEY_PASSPHRASE='' GRIDLEDGER=$bin "$work/kubernetes/make-network.sh" "$n" "$overlay"
    fi
    overlays+=("$overlay")
done
node "$tools/check-kubernetes.mjs" "${overlays[@]}"
