#!/usr/bin/env bash
# Build the Python module (python/, release, via maturin) into a venv with what its tests
# need, then run its tests (python/tests) against the command line in target/debug.
# The venv is LISA's (scripts/install-lisa.sh), so the RTAConf and lisa_trace tests run for
# real; $SCHEDLAB_PY_VENV names another. Without LISA, a plain venv: those tests then skip
# (and fail under CI=true).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${SCHEDLAB_PY_VENV:-target/lisa-venv}
if ! [ -x "$venv/bin/python" ]; then
  venv=target/py-venv
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
fi
py=$venv/bin/python
pip=("$py" -m pip install --quiet --disable-pip-version-check)
# The pins are install-lisa.sh's, so LISA's own dependencies stay as it wants them.
"${pip[@]}" "numpy<2" "pandas<2.2" matplotlib "dask[distributed]" pytest
start=$SECONDS
"${pip[@]}" ./python
echo "python module built and installed in $((SECONDS - start)) s"
[ -x target/debug/schedlab ] || cargo build --quiet
# From the checkout's root, so that python/schedlab (the sources) does not shadow the
# installed package.
SCHEDLAB_BIN=target/debug/schedlab "$py" -m pytest -q -rs -p no:cacheprovider python/tests
