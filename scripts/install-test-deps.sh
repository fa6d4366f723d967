#!/usr/bin/env bash
# What the tests check schedlab against, so that `scripts/test` skips nothing: LISA (a venv in
# target/lisa-venv), trace-cmd and KernelShark's loader (trace.dat), rt-app, rt-tests and perf
# (the host's real workloads). Debian packages need root (or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-lisa.sh
missing=()
for cmd in trace-cmd kernelshark rt-app cyclictest hackbench perf; do
  command -v "$cmd" >/dev/null || missing+=("$cmd")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    trace-cmd kernelshark rt-app rt-tests linux-perf
fi
