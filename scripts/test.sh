#!/usr/bin/env bash
# Builds everything that this machine can build and runs the whole test suite
# (C/CMocka on every built backend, JUnit, headless ImageJ macros, the cross-built linux-aarch64
# and windows-x86_64 C suites under qemu and wine) and checks the jar's native libraries
# (scripts/check_natives.sh); then builds the C library
# and its tests again with AddressSanitizer + UndefinedBehaviorSanitizer (CPU and OpenCL; no
# CUDA: its driver clashes with ASan's shadow memory; no Java) and runs the C suite there.
# Any sanitizer report fails the run.
# Usage: scripts/test.sh [extra cmake args]
#   build dirs: build/ and build-asan/ (override with BUILD_DIR, SAN_BUILD_DIR);
#   SANITIZE=0 skips the sanitizer build.
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
