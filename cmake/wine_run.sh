#!/bin/sh
# The cross suite's emulator for windows-x86_64 (cmake/toolchains/windows-x86_64.cmake): runs a
# Windows test program under Debian's wine64. Now and then wine fails to start a program at all
# and exits before the program's first instruction, when another wine process of the prefix ends
# at the same moment. Seen two ways: "wine client error:0: recvmsg: Connection reset by peer"
# (about one suite run in ten), and a failure after 0.01 s with no output whatever (CI, session
# 20's stop). Every test program prints CMocka's header before anything else, so a failed run
# whose only output is wine's own client errors, or nothing, never ran: that start, and only
# that, is tried again, up to three times. Any output of the program itself ends the retries.
out=$(mktemp "${TMPDIR:-/tmp}/iwpp-wine.XXXXXX") || exit 1
try=1
while :; do
  /usr/lib/wine/wine64 "$@" >"$out" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$try" -lt 3 ] && ! grep -v -q '^wine client error' "$out"; then
    echo "wine_run.sh: wine did not start $1 (try $try, exit $rc: $(head -n 1 "$out" || true)); starting it again" >&2
    try=$((try + 1))
    sleep 1
    continue
  fi
  cat "$out"
  rm -f "$out"
  exit "$rc"
done
