#!/usr/bin/env bash
# Checks the native libraries inside the plugin jar (or a folder laid out as its native/):
#  - linux-*: the newest glibc symbol version each needs is at most MAX_GLIBC (2.17), its
#    NEEDED entries are only libc, libm, libdl, libpthread and the dynamic loader (no
#    libgomp, libstdc++, libgcc_s, CUDA or OpenCL), it is built for the right CPU, and it
#    exports the JNI entry points and nothing else;
#  - windows-x86_64: a PE32+ x86-64 DLL importing only Windows' own DLLs (no libgomp,
#    libwinpthread or libgcc DLLs), exporting every JNI entry point;
#  - macos-*: a Mach-O dylib of the right CPU, linking only libSystem, exporting every JNI
#    entry point (and signed, ad hoc, on arm64).
# The JNI entry points expected are the native methods of java/src/iwpp/IwppNative.java.
# Usage: scripts/check_natives.sh <IWPP_Plugin.jar | native-folder> [platform,...]
#   (default platforms: all five; MAX_GLIBC=2.28 loosens the glibc bar)
set -euo pipefail
src=${1:?usage: check_natives.sh <jar|folder> [platforms]}
root=$(cd "$(dirname "$0")/.." && pwd)
platforms=${2:-linux-x86_64,linux-aarch64,windows-x86_64,macos-x86_64,macos-arm64}
max_glibc=${MAX_GLIBC:-2.17}

for t in readelf llvm-nm llvm-readobj llvm-objdump; do
  command -v $t >/dev/null || { echo "check_natives: $t missing (Debian: binutils, llvm)" >&2; exit 2; }
done

[ -e "$src" ] || { echo "check_natives: no $src" >&2; exit 2; }
src=$(cd "$(dirname "$src")" && pwd)/$(basename "$src")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -d "$src" ]; then
  dir=$src
else
  (cd "$work" && unzip -q -o "$src" 'native/*')
  dir=$work/native
fi

# Java_iwpp_IwppNative_<name> for every `native` method of IwppNative.java.
{ grep -oE 'static native [][A-Za-z0-9_]+ [A-Za-z0-9_]+\(' "$root/java/src/iwpp/IwppNative.java" || true; } |
  tr -d '(' |
  awk '{print "Java_iwpp_IwppNative_" $4}' | sort -u > "$work/expected"
[ -s "$work/expected" ] || { echo "check_natives: no native methods found in IwppNative.java" >&2; exit 2; }

fail=0
bad() { echo "FAIL $1: $2"; fail=1; }
ok() { echo "ok   $1: $2"; }

check_exports() { # platform, file with the exported names
  local p=$1 have=$2 missing
  missing=$(comm -23 "$work/expected" <(sort -u "$have"))
  if [ -n "$missing" ]; then bad "$p" "JNI entry points not exported: $(echo $missing)"
  else ok "$p" "exports all $(wc -l < "$work/expected") JNI entry points"; fi
}

IFS=, read -ra want <<< "$platforms"
for p in "${want[@]}"; do
  case $p in
    windows-*) f=$dir/$p/iwpp_jni.dll ;;
    macos-*) f=$dir/$p/libiwpp_jni.dylib ;;
    *) f=$dir/$p/libiwpp_jni.so ;;
  esac
  if [ ! -f "$f" ]; then bad "$p" "no ${f#$dir/}"; continue; fi
  case $p in
    linux-*)
      machine=$(readelf -h "$f" | awk -F: '/Machine:/ {gsub(/^ +/, "", $2); print $2}')
      case $p in
        linux-x86_64) [[ $machine == *X86-64* ]] || bad "$p" "built for $machine" ;;
        linux-aarch64) [[ $machine == *AArch64* ]] || bad "$p" "built for $machine" ;;
      esac
      newest=$(readelf -V -W "$f" | grep -oE 'Name: GLIBC_[0-9.]+' | sed 's/Name: GLIBC_//' | sort -uV | tail -1)
      if [ -z "$newest" ]; then bad "$p" "no GLIBC version needs found"
      elif [ "$(printf '%s\n%s\n' "$newest" "$max_glibc" | sort -V | tail -1)" != "$max_glibc" ]; then
        bad "$p" "needs GLIBC_$newest (bar: $max_glibc): $(readelf --dyn-syms -W "$f" | grep -oE "[A-Za-z0-9_]+@GLIBC_$newest" | sort -u | head -5 | tr '\n' ' ')"
      else ok "$p" "newest glibc symbol version GLIBC_$newest (bar: $max_glibc)"; fi
      needed=$(readelf -d -W "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)
      extra=$(echo "$needed" | grep -vxE 'libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1' || true)
      if [ -n "$extra" ]; then bad "$p" "needs $(echo $extra)"; else ok "$p" "NEEDED: $(echo $needed)"; fi
      llvm-nm -D --defined-only "$f" | awk '{print $NF}' > "$work/exports"
      check_exports "$p" "$work/exports"
      others=$(grep -v '^Java_iwpp_' "$work/exports" | grep -v '^IWPP' || true)
      [ -z "$others" ] || bad "$p" "exports more than the JNI entry points: $(echo $others | cut -c1-200)"
      ;;
    windows-*)
      fmt=$(llvm-readobj --file-headers "$f" | awk -F: '/^Format:/ {print $2}')
      [[ $fmt == *COFF-x86-64* ]] || bad "$p" "format $fmt"
      imports=$(llvm-readobj --coff-imports "$f" | sed -n 's/^ *Name: \(.*\.dll\)$/\1/Ip' | sort -uf)
      extra=$(echo "$imports" | grep -viE '^(kernel32|msvcrt|advapi32|user32|ntdll|ucrtbase|api-ms-win-.*)\.dll$' || true)
      if [ -n "$extra" ]; then bad "$p" "imports $(echo $extra)"; else ok "$p" "imports only $(echo $imports)"; fi
      llvm-readobj --coff-exports "$f" | sed -n 's/^ *Name: //p' > "$work/exports"
      check_exports "$p" "$work/exports"
      ;;
    macos-*)
      fmt=$(llvm-readobj --file-headers "$f" | awk -F: '/^Format:/ {print $2}')
      case $p in
        macos-x86_64) [[ $fmt == *Mach-O*x86-64* ]] || bad "$p" "format $fmt" ;;
        macos-arm64) [[ $fmt == *Mach-O*arm64* || $fmt == *Mach-O*aarch64* ]] || bad "$p" "format $fmt" ;;
      esac
      id=$(llvm-objdump --macho --dylib-id "$f" | tail -n +2 | awk '{print $1}')
      libs=$(llvm-objdump --macho --dylibs-used "$f" | tail -n +2 | awk '{print $1}' | grep -vxF "$id" || true)
      [[ $id == @rpath/* ]] || bad "$p" "install name $id (a build path; want @rpath/...)"
      # Apple silicon runs no unsigned code: the arm64 library needs (at least ad-hoc) a signature.
      if [ "$p" = macos-arm64 ] && ! llvm-objdump --macho --private-headers "$f" | grep -q LC_CODE_SIGNATURE; then
        bad "$p" "no code signature (LC_CODE_SIGNATURE)"
      fi
      extra=$(echo "$libs" | grep -vxE '/usr/lib/libSystem\.B\.dylib' || true)
      if [ -n "$extra" ]; then bad "$p" "links $(echo $extra)"; else ok "$p" "$fmt, links only $(echo $libs)"; fi
      llvm-nm --extern-only --defined-only "$f" | awk '{print $NF}' | sed 's/^_//' > "$work/exports"
      check_exports "$p" "$work/exports"
      ;;
  esac
done

if [ $fail -ne 0 ]; then echo "check_natives: FAILED"; exit 1; fi
echo "check_natives: all ${#want[@]} platforms pass"
