#!/usr/bin/env python3
"""Summary of a tiled reconstruction's trace (tuning key tiles.trace, native/tiles.c: a line per
tile run). For each call in the file: wall time, runs by kind, the time summed over runs in each
phase of a full run (gather, waiting for the device, upload + clip, reconstruct, download, write
back) and in host re-runs (and their phases: locks, halo copy, seeding, queue), when the first
runs were all done, and how busy the device phases kept the workers (the union of their
reconstruct intervals, and of upload..download).

    python3 bench/tiles_trace.py TRACE_FILE
"""
import sys


def union(iv):
    tot, end = 0.0, None
    for a, b in sorted(iv):
        if end is None or a > end:
            tot += b - a
            end = b
        elif b > end:
            tot += b - end
            end = b
    return tot


def report(head, runs, end):
    kinds = {}
    ph = [0.0] * 6
    host_ms = pops = 0.0
    rph = [0.0] * 4  # host re-runs: neighbours' locks, halo copy, seeding, queue
    seeds = 0
    first_done = 0.0
    rec, dev = [], []
    workers = {}
    for r in runs:
        w, k, n, kind, tp, tf = int(r[0]), r[1], int(r[2]), r[3], float(r[4]), float(r[5])
        kinds[kind] = kinds.get(kind, 0) + 1
        host_ms += tf - tp
        pops += int(r[12])
        if kind != "full" and len(r) >= 17 and r[13] != "-":
            # (kind host+full: the re-run ends where the full run starts)
            r_end = tf if kind == "host+full" else float(r[11])
            m = [float(x) for x in r[14:17]]
            for i, (a, b) in enumerate(zip([tp] + m, m + [r_end])):
                rph[i] += b - a
            seeds += int(r[13])
        t_end = float(r[11])
        workers[w] = workers.get(w, 0.0) + t_end - tp
        if kind != "host":
            m = [float(x) for x in r[6:12]]
            marks = [tf] + m
            for i in range(6):
                ph[i] += marks[i + 1] - marks[i]
            rec.append((m[2], m[3]))
            dev.append((m[1], m[4]))
            if n == 0:
                first_done = max(first_done, t_end)
    print(head)
    print("  wall %.2f ms, runs %s, first runs all done at %.2f ms" % (end, kinds, first_done))
    names = ["gather", "wait device", "upload+clip", "reconstruct", "download", "write back"]
    print("  full runs, summed: " + ", ".join("%s %.1f" % (a, b) for a, b in zip(names, ph)) + " ms")
    print("  host re-runs, summed: %.1f ms, %d pops (%.3f us a pop)" % (host_ms, pops, 1e3 * host_ms / pops if pops else 0))
    if seeds:
        print("  host re-runs' phases, summed: waiting for the neighbours' locks %.1f, halo copy %.1f, seeding %.1f "
              "(%d changed halo pixels, %.3f us each), queue %.1f ms (%.3f us a pop)"
              % (rph[0], rph[1], rph[2], seeds, 1e3 * rph[2] / seeds, rph[3], 1e3 * rph[3] / pops if pops else 0))
    print("  device: reconstruct busy %.2f ms of %.2f (union), upload..download busy %.2f" % (union(rec), end, union(dev)))
    print("  worker busy (ms): " + " ".join("%d:%.1f" % (w, t) for w, t in sorted(workers.items())))


def main(path):
    head, runs = None, []
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == "tiles":
            head, runs = line.strip(), []
        elif f[0] == "tile":
            runs.append(f[1:])
        elif f[0] == "end" and head:
            report(head, runs, float(f[1]))
            head = None


if __name__ == "__main__":
    main(sys.argv[1])
