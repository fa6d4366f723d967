#!/usr/bin/env python3
"""Mutation fuzzing of schedlab's inputs: workloads, experiments and platform files, each
mutated the way a careless user or a fuzzer edits text, run with a time limit.

    scripts/fuzz.py BIN N [--seed S] [--jobs J] [--timeout SECS]

A run passes when it exits 0, or exits 2 with exactly one stderr line that starts
`schedlab:` (every warning before the error is a failure too); a panic, an abort, a signal,
another exit code or a timeout is a failure, printed with the input that caused it (kept
under $TMPDIR). The summary line counts them. Deterministic for a seed.
"""

import os
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NUMBERS = ["0", "-1", "1e12", "18446744073709551616", "9223372036854775807", "-0", "1.5",
           "4294967296", "NaN", "\"x\"", "null", "[]", "{}", "1048577"]
JUNK = ["{", "}", "[", "]", ",", ":", "\"", "\\", "\u00e9", "\xff", "#", "=", "\n", "true",
        "\"fork\": \"t\"", "\"instance\": 100000", "\"loop\": -1", "\"cpus\": [99]"]


def seeds():
    """(suffix, text, how it is run) of every input the fuzzer starts from."""
    out = []
    for d, suffix in [("workloads", ".json"), ("tests/rtapp-doc-examples", ".json"),
                      ("../shared/workloads/rt-app-examples", ".json")]:
        for p in sorted((ROOT / d).rglob(f"*{suffix}")):
            out.append((suffix, p.read_text(errors="replace"), "run"))
    for p in sorted((ROOT / "experiments").glob("*.toml")):
        out.append((".toml", p.read_text(errors="replace"), "run"))
    for p in sorted((ROOT / "platforms").glob("*.toml")):
        out.append((".toml", p.read_text(errors="replace"), "platform"))
    return out


def mutate(text, rng):
    for _ in range(rng.randint(1, 3)):
        lines = text.split("\n")
        k = rng.randrange(6)
        i = rng.randrange(max(len(lines), 1))
        if k == 0 and lines:
            del lines[i]
        elif k == 1 and lines:
            lines.insert(i, lines[i])
        elif k == 2:
            digits = [j for j, c in enumerate(text) if c.isdigit()]
            if digits:
                j = rng.choice(digits)
                e = j
                while e < len(text) and (text[e].isdigit() or text[e] == "."):
                    e += 1
                text = text[:j] + rng.choice(NUMBERS) + text[e:]
                continue
        elif k == 3:
            text = text[: rng.randrange(len(text) + 1)]
            continue
        elif k == 4:
            j = rng.randrange(len(text) + 1)
            text = text[:j] + rng.choice(JUNK) + text[j:]
            continue
        else:
            j = rng.randrange(len(text) + 1)
            text = text[:j] + chr(rng.randrange(0x20, 0x7f)) + text[j + 1:]
            continue
        text = "\n".join(lines)
    return text


def one(args):
    binary, i, seed_input, seed, timeout, tmp = args
    suffix, text, how = seed_input
    rng = random.Random(seed * 1_000_003 + i)
    path = Path(tmp) / f"in{i}{suffix}"
    path.write_bytes(mutate(text, rng).encode("utf-8", errors="surrogateescape"))
    if how == "platform":
        cmd = [binary, "run", "--platform", str(path), "--duration", "50ms"]
    else:
        cmd = [binary, "run", str(path), "--duration", "50ms"]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=ROOT,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return ("timeout", path)
    err = p.stderr.decode(errors="replace").strip().split("\n")
    if p.returncode == 0:
        path.unlink()
        return ("ok", None)
    if p.returncode == 2 and len(err) == 1 and err[0].startswith("schedlab:"):
        path.unlink()
        return ("ok", None)
    kind = "panic" if p.returncode == 101 else f"exit {p.returncode}"
    if p.returncode == 2:
        kind = f"exit 2 with {len(err)} lines"
    return (kind, path, err[-3:])


def main():
    binary, n = sys.argv[1], int(sys.argv[2])
    opt = dict(zip(sys.argv[3::2], sys.argv[4::2]))
    seed = int(opt.get("--seed", 1))
    jobs = int(opt.get("--jobs", os.cpu_count() or 1))
    timeout = float(opt.get("--timeout", 10))
    inputs = seeds()
    tmp = tempfile.mkdtemp(prefix="schedlab-fuzz-")
    rng = random.Random(seed)
    work = [(binary, i, inputs[rng.randrange(len(inputs))], seed, timeout, tmp) for i in range(n)]
    counts = {}
    with ThreadPoolExecutor(jobs) as ex:
        for r in ex.map(one, work, chunksize=64):
            counts[r[0]] = counts.get(r[0], 0) + 1
            if r[0] != "ok":
                print(r[0], r[1], *r[2:], flush=True)
    bad = sum(v for k, v in counts.items() if k != "ok")
    print(f"fuzz: {n} runs, {counts.get('ok', 0)} ok, {bad} failed {dict(sorted(counts.items()))}"
          f" (inputs kept in {tmp})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
