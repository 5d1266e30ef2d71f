#!/usr/bin/env python3
"""OpenCL / CUDA per family, and each run against the first, from edt_families CSVs.

    python3 bench/dan_ratios.py dan_tiles.csv [dan_queue.csv ...]

For each file and size: every family's CUDA and OpenCL compute time (median of the reps), the
ratio OpenCL / CUDA, how many families are within 1.3x, the worst family of each backend, and
the ratio of the work behind them (edt_families' visited column: the pixels the propagation
visited).
With several files, each later file's times against the first file's (same size, family and
backend): the first file is the baseline measured in the same run.
"""
import csv
import sys
from collections import defaultdict


def load(path, key="compute_ms"):
    t = defaultdict(dict)  # (size) -> {(family, backend): value}
    for r in csv.DictReader(open(path)):
        if r.get(key):
            t[r["size"]][(r["family"], r["backend"])] = float(r[key])
    return t


def main(paths):
    runs = [(p, load(p)) for p in paths]
    for path, t in runs:
        print(f"## {path}")
        for size, d in t.items():
            fams = sorted({f for f, _ in d})
            rows, within = [], 0
            if not any(b == "cuda" for _, b in d) or not any(b == "opencl" for _, b in d):
                continue  # one backend only: compared below against the first file
            for f in fams:
                cu, cl = d.get((f, "cuda")), d.get((f, "opencl"))
                ratio = cl / cu if cu and cl else float("nan")
                within += ratio <= 1.3
                rows.append((f, cu, cl, ratio))
            print(f"{size}: " + "  ".join(f"{f} {cu:.2f}/{cl:.2f} ({r:.2f})" for f, cu, cl, r in rows))
            for b in ("cuda", "opencl"):
                w = max(((d[(f, b)], f) for f in fams if (f, b) in d), default=None)
                if w:
                    mean = sum(d[(f, b)] for f in fams if (f, b) in d) / len(fams)
                    print(f"  {size} {b}: worst {w[0]:.3f} ms ({w[1]}), mean {mean:.3f} ms")
            rs = [r for *_, r in rows if r == r]
            if rs:
                print(f"  {size} opencl/cuda: {within} of {len(rows)} families within 1.3x, "
                      f"range {min(rs):.2f}-{max(rs):.2f}")
            # the work behind the times: pixels visited, per backend
            v = load(path, "visited").get(size, {})
            vr = [(f, v[(f, "opencl")] / v[(f, "cuda")]) for f in fams
                  if v.get((f, "cuda")) and (f, "opencl") in v]
            if vr:
                print(f"  {size} visited opencl/cuda: " + "  ".join(f"{f} {r:.2f}" for f, r in vr))
    if len(runs) > 1:
        base_path, base = runs[0]
        for path, t in runs[1:]:
            for size, d in t.items():
                for b in ("cuda", "opencl"):
                    pairs = [(f, d[(f, bb)] / base[size][(f, bb)]) for (f, bb) in d
                             if bb == b and (f, bb) in base.get(size, {})]
                    if pairs:
                        lo, hi = min(pairs, key=lambda x: x[1]), max(pairs, key=lambda x: x[1])
                        print(f"{path} / {base_path} {size} {b}: {lo[1]:.2f}x ({lo[0]}) .. {hi[1]:.2f}x ({hi[0]})")


if __name__ == "__main__":
    main(sys.argv[1:])
