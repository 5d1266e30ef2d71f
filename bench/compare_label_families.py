"""compare_label_families.py - CuPy's label on the inputs labels_bench --families dumped, against
the backend's labels, in the same call as the backend's timings (bench/labels_device.sh families).

  python3 bench/compare_label_families.py GPU_DUMP_DIR CPU_DUMP_DIR

For each <size>_fam-<name>_binary.npy of GPU_DUMP_DIR: the median of 7 timed runs of
cupyx.scipy.ndimage.label with a full 3x3 (3x3x3) structure, its component count, and whether
the GPU backend's labels equal the CPU backend's (<size>_fam-<name>_label.npy of both dirs).
"""
import glob
import os
import sys
import time

import numpy as np

try:
    import cupy
    from cupyx.scipy import ndimage as cu_ndimage
except Exception:  # no CUDA, no cupy: the equality checks still run
    cupy = None


def cupy_ms(binary):
    dev = cupy.asarray(binary)
    structure = np.ones((3,) * binary.ndim, dtype=bool)
    cu_ndimage.label(dev, structure=structure)
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        _, n = cu_ndimage.label(dev, structure=structure)
        cupy.cuda.Device().synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), int(n)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gpu, cpu = sys.argv[1], sys.argv[2]
    bad = 0
    for path in sorted(glob.glob(os.path.join(gpu, "*_fam-*_binary.npy"))):
        name = os.path.basename(path)[: -len("_binary.npy")]
        label = name + "_label.npy"
        same = np.array_equal(np.load(os.path.join(gpu, label)), np.load(os.path.join(cpu, label)))
        bad += not same
        timing = "cupy not available"
        if cupy is not None:
            ms, n = cupy_ms(np.load(path) != 0)
            timing = f"cupy {ms:8.3f} ms  components {n:9d}"
        print(f"{name:28s} {timing}  gpu == cpu: {same}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
