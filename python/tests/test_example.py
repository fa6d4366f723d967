"""The examples run: the README's Python example as written, and the example script
(without a display), each writing nothing into the current directory."""

import os
import subprocess
import sys

from conftest import ROOT, need


def readme_example() -> str:
    """The first ```python block of the README's Python section."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("\n## Python\n"):]
    start = section.index("```python\n") + len("```python\n")
    return section[start:section.index("```", start)]


def run_in(cwd, args, tmp):
    """Run `args` in `cwd` with `tmp` as the temporary folder; its stdout."""
    env = dict(os.environ, MPLBACKEND="Agg", TMPDIR=str(tmp))
    p = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_the_readme_example_runs_as_written(tmp_path):
    for module in ("lisa.wlgen.rta", "lisa.trace", "pandas"):
        need(module)
    code = readme_example()
    assert "tempfile.TemporaryDirectory()" in code and "df_rtapp_stats()" in code
    # Run where its relative path (experiments/…) resolves, as from the checkout.
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    (cwd / "experiments").symlink_to(ROOT / "experiments")
    run_in(cwd, [sys.executable, "-c", code], tmp)
    assert sorted(os.listdir(cwd)) == ["experiments"], "nothing written to the current directory"
    assert os.listdir(tmp) == [], "the temporary folder is gone"


def test_the_frequency_residency_example_draws(tmp_path):
    for module in ("lisa.wlgen.rta", "pandas", "matplotlib"):
        need(module)
    script = str(ROOT / "python/examples/freq_residency.py")
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    out = tmp_path / "residency.png"
    run_in(cwd, [sys.executable, script, str(out)], tmp)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Without an output path: a new temporary folder, not the current directory.
    stdout = run_in(cwd, [sys.executable, script], tmp)
    assert os.listdir(cwd) == []
    (folder,) = os.listdir(tmp)
    png = tmp / folder / "freq_residency.png"
    assert stdout.strip() == f"wrote {png}"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
