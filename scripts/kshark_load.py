#!/usr/bin/env python3
"""Load a trace.dat with KernelShark's own loader (libkshark, the library its GUI opens
files with) and print what it loaded (used by tests/it/trace_formats.rs).

    python3 scripts/kshark_load.py TRACE.dat

stdout: one line per entry, in KernelShark's order: `<ts ns> <cpu> <pid> <system/event>`.
Exit 3 when libkshark is not installed (Debian: apt-get install kernelshark), 1 when it
cannot open the file or loads nothing.
"""
import ctypes
import sys


class Entry(ctypes.Structure):
    """`struct kshark_entry` of KernelShark 2.x (libkshark.h)."""
    _fields_ = [
        ("next", ctypes.c_void_p),
        ("visible", ctypes.c_uint16),
        ("stream_id", ctypes.c_int16),
        ("event_id", ctypes.c_int16),
        ("cpu", ctypes.c_int16),
        ("pid", ctypes.c_int32),
        ("offset", ctypes.c_int64),
        ("ts", ctypes.c_int64),
    ]


def main():
    try:
        lib = ctypes.CDLL("libkshark.so.2")
    except OSError as e:
        print(f"libkshark is not installed: {e}", file=sys.stderr)
        sys.exit(3)
    lib.kshark_instance.restype = ctypes.c_bool
    lib.kshark_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.kshark_load_entries.restype = ctypes.c_ssize_t
    lib.kshark_load_entries.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.kshark_get_event_name.restype = ctypes.c_char_p
    lib.kshark_get_event_name.argtypes = [ctypes.POINTER(Entry)]
    ctx = ctypes.c_void_p()
    if not lib.kshark_instance(ctypes.byref(ctx)):
        sys.exit("kshark_instance failed")
    sd = lib.kshark_open(ctx, sys.argv[1].encode())
    if sd < 0:
        sys.exit(f"kshark_open failed: {sd}")
    rows = ctypes.POINTER(ctypes.POINTER(Entry))()
    n = lib.kshark_load_entries(ctx, sd, ctypes.byref(rows))
    if n <= 0:
        sys.exit(f"kshark_load_entries loaded {n} entries")
    out = []
    for i in range(n):
        e = rows[i]
        name = lib.kshark_get_event_name(e).decode()
        out.append(f"{e.contents.ts} {e.contents.cpu} {e.contents.pid} {name}\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
