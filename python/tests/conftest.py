"""Helpers of the Python package's tests: the command line to compare with, and skips that
fail under CI=true (as the Rust tests' `common::skip`)."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cannot_check(why: str):
    """A test that cannot check what it is for says so, and fails under CI=true."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"cannot check under CI=true: {why}")
    pytest.skip(f"SKIPPED: {why} (checked nothing; fails under CI=true)")


def need(module: str):
    """Import `module`, or a visible skip."""
    try:
        return __import__(module, fromlist=["_"])
    except ImportError as e:
        cannot_check(f"{module} is not importable ({e})")


def cli_path() -> pathlib.Path:
    """The `schedlab` binary: $SCHEDLAB_BIN, else the tree's debug build, else its release."""
    env = os.environ.get("SCHEDLAB_BIN")
    candidates = [pathlib.Path(env)] if env else []
    candidates += [ROOT / "target/debug/schedlab", ROOT / "target/release/schedlab"]
    for c in candidates:
        if c.exists():
            return c
    pytest.fail("no schedlab binary: run `cargo build` or set SCHEDLAB_BIN")


def cli(*args, check=True, cwd=None):
    """Run the command line; its CompletedProcess."""
    p = subprocess.run(
        [str(cli_path()), *map(str, args)], capture_output=True, text=True, cwd=cwd
    )
    if check and p.returncode != 0:
        raise AssertionError(f"schedlab {' '.join(map(str, args))}: {p.returncode}\n{p.stderr}")
    return p


def cli_json(*args, cwd=None):
    return json.loads(cli(*args, "--json", "-", cwd=cwd).stdout)


def cli_error(*args):
    """The command line's exit-2 message (without the `schedlab: ` prefix)."""
    p = cli(*args, check=False)
    assert p.returncode == 2, (p.returncode, p.stderr)
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("schedlab: "), line
    return line[len("schedlab: "):]
