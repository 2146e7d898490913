#!/usr/bin/env bash
# carry-deps.sh - for a GPU machine that has no package registry (the lent
# ones: Ubuntu 24.04, nothing outside reachable).  Run here, in the tree's
# root, on a Debian 12 machine with its archive: the .deb files the build
# and the tests need go into .devdeps/ (ignored by git), with on-device.sh
# beside them; carry .devdeps along with the tree, and on the GPU machine
#   source .devdeps/on-device.sh; make WERROR= && tests/bench/gpu-session.sh ...
# Extra package names given as arguments are fetched too.
set -eu
here=$(dirname "$(readlink -f "$0")")
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
mkdir -p .devdeps
cd .devdeps
# the libraries of lib/ and their runtime halves, redis, the checks' python
# packages, OpenBLAS (the cpu reference point) and jq (the session script)
apt-get download \
    librdkafka-dev librdkafka1 libhiredis-dev libhiredis0.14 libcjson-dev libcjson1 \
    libseccomp-dev libcurl4-openssl-dev libssl-dev \
    redis-server redis-tools libjemalloc2 liblzf1 liblua5.1-0 lua-bitop lua-cjson \
    python3-jsonschema python3-attr python3-pyrsistent \
    libopenblas-dev libopenblas0 libopenblas0-pthread libopenblas-pthread-dev \
    jq libjq1 libonig5 "$@"
cp "$here/on-device.sh" .
echo "$(ls ./*.deb | wc -l) packages, $(du -sh . | cut -f1), in $(pwd)"
