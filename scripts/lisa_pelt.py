#!/usr/bin/env python3
"""Run LISA's PELT simulator on an activation signal (used by tests/it/pelt_oracle.rs).

    target/lisa-venv/bin/python scripts/lisa_pelt.py < signal.json

stdin:  {"events": [[t_ns, 0 or 1], ...], "samples": [t_ns, ...]}
        events: the task starts running (1) or stops (0) at t_ns, in time order;
        samples: the times at which the util is wanted.
stdout: [util or null, ...], one per sample; null where LISA has no value yet (its first
        row). Times are passed to LISA in seconds on the same absolute clock, so LISA's
        1024 us windows line up with the kernel's.
"""
import json
import sys
import warnings

warnings.filterwarnings("ignore")


def main():
    import pandas as pd
    from lisa.pelt import simulate_pelt

    signal = json.load(sys.stdin)
    times = [t / 1e9 for t, _ in signal["events"]]
    states = [state for _, state in signal["events"]]
    activations = pd.Series(states, index=pd.Index(times, dtype="float64"), dtype="float64")
    samples = pd.Index([t / 1e9 for t in signal["samples"]], dtype="float64")
    util = simulate_pelt(activations, init=0, index=samples)
    values = util.loc[samples].tolist()
    print(json.dumps([None if v != v else v for v in values]))


if __name__ == "__main__":
    main()
