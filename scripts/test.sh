#!/usr/bin/env bash
# Builds everything that this machine can build and runs the whole test suite
# (C/CMocka on every built backend, JUnit, headless ImageJ macros, the cross-built linux-aarch64
# and windows-x86_64 C suites under qemu and wine) and checks the jar's native libraries
# (scripts/check_natives.sh); then builds the C library
# and its tests again with AddressSanitizer + UndefinedBehaviorSanitizer (CPU and OpenCL; no
# CUDA: its driver clashes with ASan's shadow memory; no Java) and runs the C suite there.
# Any sanitizer report fails the run. Last, the tiled tests on the CPU backend under
# ThreadSanitizer (the tile scheduler's locks and thread pool).
# Usage: scripts/test.sh [extra cmake args]
#   build dirs: build/, build-asan/ and build-tsan/ (override with BUILD_DIR, SAN_BUILD_DIR,
#   TSAN_BUILD_DIR); SANITIZE=0 skips the ASan build, TSAN=0 the TSan one.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
# The jar's native libraries: all five platforms, glibc <= 2.17, no stray dependencies.
if [ -f "$build/IWPP_Plugin.jar" ]; then
  scripts/check_natives.sh "$build/IWPP_Plugin.jar"
fi

if [ "${SANITIZE:-1}" != 0 ]; then
  san=${SAN_BUILD_DIR:-build-asan}
  cmake -S . -B "$san" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" -DIWPP_SANITIZE=ON \
    -DIWPP_ENABLE_CUDA=OFF -DIWPP_ENABLE_JAVA=OFF -DIWPP_BUILD_BENCH=OFF
  cmake --build "$san" -j "$jobs"
  # The first report ends the test with an error (UBSan is also built with
  # -fno-sanitize-recover); a huge allocation must come back as NULL (the library then
  # reports IWPP_ENOMEM), not abort.
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir "$san" --output-on-failure -j "$jobs"
fi

# The tile scheduler's threads (the queues' lock, one lock per tile frame) under
# ThreadSanitizer: the tiled tests on the CPU backend, whose workers are threads of one process
# (TSAN=0 skips). Any report fails the run.
if [ "${TSAN:-1}" != 0 ]; then
  tsan=${TSAN_BUILD_DIR:-build-tsan}
  cmake -S . -B "$tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" -DIWPP_ENABLE_CUDA=OFF -DIWPP_ENABLE_OPENCL=OFF \
    -DIWPP_ENABLE_JAVA=OFF -DIWPP_BUILD_BENCH=OFF -DCMAKE_C_FLAGS=-fsanitize=thread \
    -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
    -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
  cmake --build "$tsan" -j "$jobs" --target test_tiles test_workpool
  # without address-space randomisation: TSan's fixed shadow layout fails to start on kernels
  # with large mmap randomisation ("unexpected memory mapping")
  norand=()
  if command -v setarch > /dev/null && setarch "$(uname -m)" -R true 2> /dev/null; then
    norand=(setarch "$(uname -m)" -R)
  fi
  TSAN_OPTIONS=halt_on_error=1 IWPP_TEST_BACKEND=cpu "${norand[@]}" "$tsan/tests/test_tiles"
  TSAN_OPTIONS=halt_on_error=1 "${norand[@]}" "$tsan/tests/test_workpool"
fi
