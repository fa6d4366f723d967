#!/usr/bin/env python3
"""Parse a schedlab trace with LISA and print {event: rows} as JSON (used by the tests).

    target/lisa-venv/bin/python scripts/lisa_trace_counts.py TRACE EVENT[,EVENT...]
Exit status 1 if LISA could not parse one of the events.
"""
import json
import sys
import warnings

warnings.filterwarnings("ignore")


def main():
    path, events = sys.argv[1], sys.argv[2].split(",")
    from lisa.trace import Trace

    trace = Trace(path, events=events, normalize_time=False, strict_events=True)
    counts = {event: len(trace.df_event(event)) for event in events}
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
