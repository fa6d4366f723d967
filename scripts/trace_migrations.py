#!/usr/bin/env python3
"""Migrations and CPU time per activation in a text trace (trace-cmd report's format, as
`schedlab run --trace` and `schedlab host record` write it).

    scripts/trace_migrations.py TRACE [PREFIX]

Each sched_migrate_task of a task whose comm starts with PREFIX (default: every task) is
classed by what surrounds it:
  wakeup   a sched_wakeup of the task follows before the CPU's next switch (try_to_wake_up);
  newidle  written on the destination CPU by a task that then switches out asleep (a
           newly-idle balance in schedule());
  idle     written on the destination CPU by swapper (an idle CPU's balance);
  busy     written on the destination CPU by a task that stays runnable (a busy CPU's tick);
  other    the rest (pushes, stoppers, a balance run on another CPU's behalf).
Then the CPU time of each activation (from a switch-in after a wake-up to the switch-out
asleep, summed over its runs) of the same tasks, at p10 / p50 / p90 in ms.
"""
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?([\d.]+): (\w+): (.*)$")


def parse(path):
    events = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                events.append(
                    (int(m.group(2)), int(m.group(3)), float(m.group(4)), m.group(5), m.group(6))
                )
    return events


def field(text, key):
    m = re.search(r"\b" + key + r"=(\S+)", text)
    return m.group(1) if m else None


def classify(events, prefix):
    counts = {}
    for i, (pid, cpu, _, name, rest) in enumerate(events):
        if name != "sched_migrate_task" or not field(rest, "comm").startswith(prefix):
            continue
        moved, dest = field(rest, "pid"), int(field(rest, "dest_cpu"))
        kind = "other"
        for _, c, _, n, r in events[i + 1 :]:
            if n == "sched_wakeup" and field(r, "pid") == moved:
                kind = "wakeup"
                break
            if n == "sched_switch" and c == cpu:
                if dest == cpu:
                    state = field(r, "prev_state")
                    kind = "idle" if pid == 0 else "busy" if state.startswith("R") else "newidle"
                break
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def cpu_per_activation(events, prefix):
    running, spent, done = {}, {}, []
    for _, cpu, ts, name, rest in events:
        if name != "sched_switch":
            continue
        prev, nxt = rest.split(" ==> ")
        comm = field(prev, "prev_comm")
        if (cpu, comm) in running:
            spent[comm] = spent.get(comm, 0.0) + ts - running.pop((cpu, comm))
            if not field(prev, "prev_state").startswith("R"):
                done.append(spent.pop(comm) * 1e3)
        comm = field(nxt, "next_comm")
        if comm.startswith(prefix) and field(nxt, "next_pid") != "0":
            running[(cpu, comm)] = ts
    return done


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    prefix = sys.argv[2] if len(sys.argv) == 3 else ""
    try:
        events = parse(sys.argv[1])
    except OSError as e:
        sys.exit(f"trace_migrations.py: {sys.argv[1]}: {e.strerror}")
    counts = classify(events, prefix)
    print("migrations:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none")
    ms = cpu_per_activation(events, prefix)
    if len(ms) >= 10:
        q = statistics.quantiles(ms, n=10)
        print(f"CPU ms per activation ({len(ms)}): p10 {q[0]:.2f}, p50 {q[4]:.2f}, p90 {q[8]:.2f}")


if __name__ == "__main__":
    main()
