#!/usr/bin/env bash
# Stages the gridledger binary for the image (docker/Dockerfile): BINARY to OUT/bin/gridledger,
# and the shared libraries it loads (ldd) to OUT/lib, except the C library's own, which the
# runtime base has. The Dockerfile's build stage runs it on the binary it built; run it on a
# binary built on a Debian 12 machine to give the Dockerfile's `prebuilt` stage its context
# (docs/operations.md, "The image").
#   docker/stage-binary.sh BINARY OUT
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 BINARY OUT" >&2
    exit 2
fi
binary=$1
out=$2

install -D -m 0755 "$binary" "$out/bin/gridledger"
mkdir -p "$out/lib"
ldd "$binary" \
    | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' \
    | { grep -Ev '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so' || true; } \
    | xargs -r cp -L -t "$out/lib/"
