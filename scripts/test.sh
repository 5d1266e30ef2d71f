#!/usr/bin/env bash
# Builds everything that this machine can build and runs the whole test suite
# (C/CMocka on every built backend, JUnit, headless ImageJ macros).
# Usage: scripts/test.sh [extra cmake args]     (build dir: build/, override with BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
