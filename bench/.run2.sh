set -u
bash bench/tiles_device.sh test 2>&1 | grep -vE "^\s*$" | tail -45
T=build-tiles/bench/tiles_bench
cmake --build build-tiles -j16 --target tiles_bench >/dev/null 2>&1
echo "== 8192"
timeout 100 stdbuf -oL $T --backend cuda --sizes 8192 --edt --reps 7 --stage "16,16M,3,0;32,16M,3,1;8,16M,3,1;16,32M,3,1" | grep -v "^  *$"
echo "== 32768"
timeout 200 stdbuf -oL $T --backend cuda --no-bandwidth --sizes 32768 --limits 880M --wlimit 880M --workers "gpu*3;gpu*2,cpu*4;gpu*2,cpu*8;gpu*3,cpu*4" --reps 3
echo "== 65536 EDT"
timeout 150 stdbuf -oL $T --backend cuda --no-bandwidth --sizes 65536 --edt-only --reps 2 --stage "16,16M,3,0;32,16M,3,1"
echo "== 98304"
timeout 240 stdbuf -oL $T --backend cuda --no-bandwidth --sizes 98304 --limits 16G --wlimit 16G --workers "gpu*3;gpu*3,cpu*4" --reps 1
