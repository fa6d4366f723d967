"""The example script runs (without a display) and draws its figure."""

import os
import subprocess
import sys

from conftest import ROOT, need


def test_the_frequency_residency_example_draws(tmp_path):
    for module in ("lisa.wlgen.rta", "pandas", "matplotlib"):
        need(module)
    out = tmp_path / "residency.png"
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.run(
        [sys.executable, str(ROOT / "python/examples/freq_residency.py"), str(out)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
