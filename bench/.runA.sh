set -u
bash bench/final_device.sh test 2>&1 | grep -vE "^\s*$|Passed" | tail -40
E=build-final/bench/edt_families
cmake --build build-final -j16 --target edt_families >/dev/null 2>&1
echo "== 512^3 EDT: default plan vs older column pass vs older row+column passes (CUDA)"
F=nuclei,ring_n1,rand_1e-2,line1,corner
timeout 60 $E --sizes 512^3 --backends cuda --reps 5 --families $F | grep -E "^512|==" 
IWPP_CUDA_EDT_COLS=banded timeout 60 $E --sizes 512^3 --backends cuda --reps 5 --families $F | grep -E "^512|=="
IWPP_CUDA_EDT_COLS=banded IWPP_CUDA_EDT_ROWS=banded timeout 60 $E --sizes 512^3 --backends cuda --reps 5 --families $F | grep -E "^512|=="
