# Cross build for linux-aarch64 with Debian's gcc-aarch64-linux-gnu; the tests run
# under qemu-aarch64 (Debian's qemu-user) against Debian's arm64 runtime libraries.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
# The JNI library is linked by zig against glibc 2.17's symbols (see cmake/natives.cmake).
set(IWPP_ZIG_TARGET aarch64-linux-gnu.2.17 CACHE STRING "")
