#!/usr/bin/env python3
"""CPU and latency of one journal-sized write + fdatasync, on files prepared three ways, alternated:
  fallocate  posix_fallocate only (unwritten extents: each first write to a block changes metadata)
  zeroed     the whole file written with zeros first
  chunked    posix_fallocate, then zeroed 1 MiB ahead of the records in the same gather write
             (what storage/Engine/Journal/JournalWriter.cs does)
Usage: perf/load/fsync-ab.py [folder] [rounds] [writes-per-round] [record-bytes]   (defaults: ., 3, 3000, 6000)
The folder must be on the disk the data folder lives on. Process CPU from getrusage (user + system)."""
import os, resource, sys, time

folder = sys.argv[1] if len(sys.argv) > 1 else "."
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
writes = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
record = os.urandom(int(sys.argv[4]) if len(sys.argv) > 4 else 6000)
size, chunk = 64 << 20, 1 << 20
zeros = bytes(chunk)


def run(mode):
    path = os.path.join(folder, "fsync-ab.tmp")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
    try:
        if mode in ("fallocate", "chunked"):
            os.posix_fallocate(fd, 0, size)
        else:
            for i in range(size // chunk):
                os.pwrite(fd, zeros, i * chunk)
        os.fsync(fd)
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        pos = written = 0
        for _ in range(writes):
            end = pos + len(record)
            if mode == "chunked" and end > written:
                written = (end + chunk - 1) // chunk * chunk
                os.pwritev(fd, [record, zeros[: written - end]], pos)
            else:
                os.pwrite(fd, record, pos)
            pos = end
            os.fdatasync(fd)
        t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        return (t1 - t0) / writes * 1e6, cpu / writes * 1e6
    finally:
        os.close(fd)
        os.remove(path)


print(f"| round | file | µs per write+fdatasync | CPU µs per write+fdatasync |\n|---|---|---|---|")
for r in range(1, rounds + 1):
    for mode in ("fallocate", "zeroed", "chunked"):
        latency, cpu = run(mode)
        print(f"| {r} | {mode} | {latency:.0f} | {cpu:.0f} |")
