#!/usr/bin/env python3
"""compare_labels.py - time scikit-image (and CuPy, when it is installed) on the inputs that
labels_bench dumped, and compare their results with the library's.

    labels_bench --backend cpu --sizes 4096,8192,512x3 --dump DIR
    python3 bench/compare_labels.py DIR [--reps 3]

For every size found in DIR (files <size>_binary.npy, _relief.npy, _markers.npy, _label.npy,
_watershed.npy, _times.txt) it times
  skimage.measure.label(binary, connectivity=ndim)                  (8 / 26 neighbours)
  skimage.segmentation.watershed(relief, markers, mask=binary, connectivity=ndim)
  cupyx.scipy.ndimage.label(binary, structure=all ones)             (if cupy imports)
and prints them beside the library's total_ms (from <size>_times.txt) with the speed-up.
Labels must be identical to skimage's (both number components in raster order). The two
watersheds differ only where floods tie (same level and plateau distance, and after a climb
the same level and distance of the neighbour they came from; skimage breaks the tie by queue
order, the library by the smaller label): the agreement is printed.
"""
import argparse
import glob
import os
import sys
import time

import numpy as np

try:
    from skimage.measure import label as sk_label
    from skimage.segmentation import watershed as sk_watershed
except ImportError:
    sys.exit("compare_labels.py needs scikit-image (pip install scikit-image)")

try:
    import cupy
    from cupyx.scipy import ndimage as cu_ndimage
except Exception:  # no CUDA, no cupy: the CPU comparisons still run
    cupy = None


def median_ms(fn, reps):
    times = []
    out = None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return float(np.median(times)), out


def read_times(path):
    t = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                op, backend, total, compute = line.split()
                t[op] = (backend, float(total), float(compute))
    return t


def cupy_label_ms(binary, reps):
    structure = np.ones((3,) * binary.ndim, dtype=bool)
    dev = cupy.asarray(binary)

    def run():
        out, n = cu_ndimage.label(dev, structure=structure)
        cupy.cuda.Device().synchronize()
        return out

    run()  # compile and warm up
    ms, out = median_ms(run, reps)
    return ms, cupy.asnumpy(out)


def row(name, ours, theirs_ms, who, note=""):
    if ours is None:
        print(f"  {name:<10} {who:<22} {theirs_ms:10.1f} ms   (no library time){note}")
        return
    backend, total, _ = ours
    print(f"  {name:<10} {who:<22} {theirs_ms:10.1f} ms   iwpp/{backend} {total:9.1f} ms   "
          f"x{theirs_ms / total:6.1f}{note}")


def compare_size(d, tag, reps):
    load = lambda what: np.load(os.path.join(d, f"{tag}_{what}.npy"))
    binary = load("binary") != 0
    relief, markers = load("relief"), load("markers")
    times = read_times(os.path.join(d, f"{tag}_times.txt"))
    print(f"{tag}: {binary.size} pixels, {int(markers.max())} markers")

    ms, lab = median_ms(lambda: sk_label(binary, connectivity=binary.ndim), reps)
    note = ""
    if os.path.exists(os.path.join(d, f"{tag}_label.npy")):
        same = np.array_equal(lab.astype(np.uint32), load("label"))
        note = "   identical" if same else "   DIFFERENT"
    row("label", times.get("label"), ms, "skimage.measure.label", note)

    if cupy is not None:
        ms, lab = cupy_label_ms(binary, reps)
        row("label", times.get("label"), ms, "cupyx ndimage.label", "   (numbering may differ)")

    ms, ws = median_ms(lambda: sk_watershed(relief, markers, mask=binary, connectivity=binary.ndim), reps)
    note = ""
    if os.path.exists(os.path.join(d, f"{tag}_watershed.npy")):
        ours = load("watershed")
        inside = binary
        agree = float(np.mean(ws[inside].astype(np.uint32) == ours[inside])) if inside.any() else 1.0
        note = f"   agreement {agree * 100:.3f}% of the mask"
    row("watershed", times.get("watershed"), ms, "skimage watershed", note)
    if "dws" in times:
        backend, total, _ = times["dws"]
        print(f"  {'dws':<10} {'(iwpp only)':<22} {'':>10}      iwpp/{backend} {total:9.1f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="the --dump directory of labels_bench")
    ap.add_argument("--reps", type=int, default=3, help="timed runs per case (median)")
    a = ap.parse_args()
    tags = sorted(os.path.basename(p)[: -len("_binary.npy")] for p in glob.glob(os.path.join(a.dir, "*_binary.npy")))
    if not tags:
        sys.exit(f"no *_binary.npy in {a.dir}: run labels_bench --dump {a.dir} first")
    print(f"# scikit-image {__import__('skimage').__version__}, numpy {np.__version__}, "
          f"cupy {cupy.__version__ if cupy is not None else 'not available'}; medians of {a.reps}")
    for tag in tags:
        compare_size(a.dir, tag, a.reps)


if __name__ == "__main__":
    main()
