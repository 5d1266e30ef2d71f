#!/usr/bin/env bash
# One call on the GPU machine for issue 11's bars (about 4 minutes): build tiles_bench only, then
# whole calls from ordinary host memory (transfers included), in memory and by tiles, each
# checked bit for bit against the in-memory result:
#   8192^2 reconstruction and exact EDT, budget 56M (1/8) with the default and two worker lists;
#   16384^2 at 220M (1/8); 32768^2 at 880M (1/8) and 2G, exact EDT in memory and by tiles;
#   65536^2 exact EDT in memory and with a 16 GB budget; 98304^2 with a 16 GB budget;
#   then the link's and the host copies' bandwidths and the 8192^2 calls against the link floor.
#   bash bench/whole_calls_device.sh        (log in $OUT/whole_calls.log, or build-whole-out/)
# A/B of the 2D reconstruction kernels: IWPP_CUDA_REC_QUADS=0 bash bench/whole_calls_device.sh
set -u
LOG_NAME=whole_calls
. "$(dirname "$0")/device_env.sh"
nvidia-smi -L
B=/tmp/build-whole
cmake -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Release -DIWPP_ENABLE_JAVA=OFF -DIWPP_ENABLE_OPENCL=OFF \
  -DIWPP_BUILD_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null && cmake --build "$B" -j16 --target tiles_bench 2>&1 | grep -E " error"
T=$B/bench/tiles_bench
stamp 8192; timeout 100 "$T" --backend cuda --sizes 8192 --limits 56M --workers "gpu*2;gpu,cpu*4" --wlimit 56M --edt --reps 9 --no-bandwidth
stamp 16384; timeout 60 "$T" --backend cuda --sizes 16384 --limits 220M --reps 3 --no-bandwidth
stamp 32768; timeout 200 "$T" --backend cuda --sizes 32768 --limits 880M,2G --workers "gpu,cpu*8" --wlimit 880M --edt --reps 3 --no-bandwidth
stamp "65536 EDT"; timeout 150 "$T" --backend cuda --sizes 65536 --limits 16G --edt-only --reps 2 --no-bandwidth
stamp 98304; timeout 200 "$T" --backend cuda --sizes 98304 --limits 16G --reps 1 --no-bandwidth
stamp "8192 with the link probe"
timeout 100 "$T" --backend cuda --sizes 8192 --edt --reps 5 | grep -E "bandwidth|host stream 16|host memcpy 16|in memory|floor"
stamp done
