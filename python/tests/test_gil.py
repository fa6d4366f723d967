"""The GIL is released while simulating: two runs in two Python threads overlap."""

import threading
import time

import schedlab


def test_two_runs_in_two_threads_overlap():
    spans = {}

    def one(name):
        t0 = time.monotonic()
        r = schedlab.run(duration="400s")  # the default workload: about a second of host time
        spans[name] = (t0, time.monotonic(), r.json["wall_ns"] / 1e9)

    threads = [threading.Thread(target=one, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    start = min(s[0] for s in spans.values())
    end = max(s[1] for s in spans.values())
    simulating = sum(s[2] for s in spans.values())
    # Each simulation took wall_ns inside its thread's [t0, t1]. Had one held the GIL, the
    # two would have run one after the other, within end - start; more than that means they
    # ran at the same time.
    assert simulating > (end - start) * 1.2, (spans, end - start)
