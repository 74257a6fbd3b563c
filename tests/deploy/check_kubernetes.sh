#!/usr/bin/env bash
# Renders every overlay of deploy/kubernetes with the network make-network.sh writes from the
# built binary, and validates every object (check-kubernetes.mjs), in a copy of the folder so
# that the source tree gets no keys.
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
    GRIDLEDGER=$bin "$work/kubernetes/make-network.sh" "$n" "$overlay"
    overlays+=("$overlay")
done
node "$tools/check-kubernetes.mjs" "${overlays[@]}"
