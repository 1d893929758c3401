#!/usr/bin/env python3
"""Latency and errors of a query load across an index swap (perf/load/replacement.sh).

    swap-latency.py OUT-PREFIX PUT-TIME SWAP-TIME [WINDOW-SECONDS]

OUT-PREFIX: the files perf/load/paths-timed.lua wrote (one line per request: start ns on
CLOCK_MONOTONIC, latency µs, status). PUT-TIME: time.monotonic() when the new definition was PUT;
SWAP-TIME: when the replacement was first seen gone (a poll of GET /indexes/status), or "-".
Prints one line of JSON: per phase (before the PUT, while the replacement builds, the swap window
SWAP-TIME - WINDOW .. SWAP-TIME + WINDOW (default 1 s), after it) the requests, the non-200 answers,
p50, p99, p99.9 and the slowest (ms); and the slowest requests around the swap.
"""
import glob
import json
import sys

prefix, put_time = sys.argv[1], float(sys.argv[2])
swap_time = None if sys.argv[3] == "-" else float(sys.argv[3])
window = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0

records = []
for path in glob.glob(prefix + "*"):
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:
                records.append((int(parts[0]) / 1e9, int(parts[1]) / 1e3, int(parts[2])))
records.sort()


def summary(rows):
    if not rows:
        return {"requests": 0}
    latencies = sorted(r[1] for r in rows)

    def pct(p):
        return round(latencies[min(len(latencies) - 1, int(len(latencies) * p / 100))], 2)
    return {
        "requests": len(rows),
        "non200": sum(1 for r in rows if r[2] != 200),
        "p50": pct(50), "p99": pct(99), "p99.9": pct(99.9), "max": round(latencies[-1], 2),
        "seconds": round(rows[-1][0] - rows[0][0], 2),
    }


def ends(r):
    return r[0] + r[1] / 1e3


phases = {"all": summary(records), "before": summary([r for r in records if r[0] < put_time])}
if swap_time is None:
    phases["building"] = summary([r for r in records if r[0] >= put_time])
else:
    lo, hi = swap_time - window, swap_time + window
    phases["building"] = summary([r for r in records if put_time <= r[0] and ends(r) < lo])
    phases["swap"] = summary([r for r in records if ends(r) >= lo and r[0] <= hi])
    phases["after"] = summary([r for r in records if r[0] > hi])
    near = [r for r in records if ends(r) >= lo and r[0] <= hi]
    phases["slowest_near_swap"] = [
        {"at_s": round(r[0] - swap_time, 3), "ms": round(r[1], 2), "status": r[2]}
        for r in sorted(near, key=lambda r: -r[1])[:5]]
phases["non200_statuses"] = sorted({r[2] for r in records if r[2] != 200})
print(json.dumps(phases))
