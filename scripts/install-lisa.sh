#!/usr/bin/env bash
# Install LISA (lisa-linux 3.1.0) into target/lisa-venv, where the tests look for it.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/lisa-venv
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import lisa.trace" 2>/dev/null; then
  exit 0
fi
mkdir -p target
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check \
  lisa-linux==3.1.0 "numpy<2" "pyarrow<16" "pandas<2.2" nest_asyncio
"$venv/bin/python" -c "import lisa.trace"
