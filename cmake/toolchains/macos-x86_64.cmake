# Cross build for macos-x86_64 with zig cc (PyPI's ziglang): the library is linked
# against macOS's system libraries and the OpenCL framework is opened at run time.
# No OpenMP runtime is available for this compiler here: the CPU backend runs
# sequentially (tiles still use several threads). Built and checked, not run.
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER "${CMAKE_CURRENT_LIST_DIR}/zig-cc")
set(CMAKE_C_COMPILER_TARGET x86_64-macos.11.0)
set(CMAKE_AR "${CMAKE_CURRENT_LIST_DIR}/zig-ar")
set(CMAKE_RANLIB "${CMAKE_CURRENT_LIST_DIR}/zig-ranlib")
# _POSIX_C_SOURCE hides sysconf's _SC_NPROCESSORS_ONLN on macOS unless this is set.
set(CMAKE_C_FLAGS_INIT "-D_DARWIN_C_SOURCE")
set(CMAKE_OSX_SYSROOT "" CACHE PATH "")
set(CMAKE_OSX_DEPLOYMENT_TARGET "" CACHE STRING "")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
