#!/bin/sh
# The cross suite's emulator for windows-x86_64 (cmake/toolchains/windows-x86_64.cmake): runs a
# Windows test program under Debian's wine64. Now and then wine fails to start a program at all:
# it prints "wine client error:0: recvmsg: Connection reset by peer" and exits before the
# program's first instruction (seen once in about ten suite runs, when another wine process of
# the prefix ended at the same moment). That start, and only that (the program printed nothing),
# is tried again, up to three times; any output of the program itself ends the retries.
out=$(mktemp "${TMPDIR:-/tmp}/iwpp-wine.XXXXXX") || exit 1
try=1
while :; do
  /usr/lib/wine/wine64 "$@" >"$out" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$try" -lt 3 ] && grep -q '^wine client error' "$out" &&
     ! grep -v -q '^wine client error' "$out"; then
    echo "wine_run.sh: wine did not start $1 (try $try: $(head -n 1 "$out")); starting it again" >&2
    try=$((try + 1))
    sleep 1
    continue
  fi
  cat "$out"
  rm -f "$out"
  exit "$rc"
done
