#!/usr/bin/env python3
"""Throughput over part of a run, from the answer times perf/load/load-timed.lua recorded.

    window-rate.py OUT-PREFIX T0 [END]

Counts the answers that arrived between T0 + 0.5 s (the connections' ramp-up left out) and END
(time.monotonic(), e.g. the moment a replacement swapped in), or the last answer when END is absent
or "-". Prints: answers/s over that window, the window's seconds, the answers that were not 2xx.
"""
import glob
import sys

prefix, t0 = sys.argv[1], float(sys.argv[2]) + 0.5
end = float(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] != "-" else None
times, bad = [], 0
for path in glob.glob(prefix + "*"):
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 2:
                continue
            times.append(int(parts[0]) / 1e9)
            if not parts[1].startswith("2"):
                bad += 1
if end is None:
    end = max(times)
inside = sum(1 for t in times if t0 <= t < end)
print(f"{inside / (end - t0):.0f} {end - t0:.2f} {bad}")
