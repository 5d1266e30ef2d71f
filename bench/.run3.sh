set -u
bash bench/tiles_device.sh test 2>&1 | grep -E "tests passed|Failed|FAILED|\*\*\*|Total Test" | tail -12
T=build-tiles/bench/tiles_bench
cmake --build build-tiles -j16 --target tiles_bench >/dev/null 2>&1
for pool in 0 1; do
echo "== 8192 IWPP_CUDA_POOL=$pool"
IWPP_CUDA_POOL=$pool timeout 100 stdbuf -oL $T --backend cuda --no-bandwidth --sizes 8192 --edt --reps 9 --limits 56M | grep -v "^  *$"
done
echo "== 32768 default (pool)"
timeout 200 stdbuf -oL $T --backend cuda --no-bandwidth --sizes 32768 --limits 880M,2G --wlimit 880M --workers "gpu*2;gpu*3,cpu*8;gpu*4,cpu*4" --reps 3 --edt
echo "== 98304"
timeout 240 stdbuf -oL $T --backend cuda --no-bandwidth --sizes 98304 --limits 16G --reps 1
