# natives.cmake - the native libraries the plugin jar carries, one per platform:
#
#   native/linux-x86_64/libiwpp_jni.so      this build's objects (CPU, CUDA, OpenCL), linked by
#                                            zig against glibc 2.17 with the OpenMP runtime
#                                            (minigomp) and the C++ runtime (zig's libc++abi) inside
#   native/linux-aarch64/libiwpp_jni.so     sub-build: Debian's aarch64 gcc, linked the same way
#   native/windows-x86_64/iwpp_jni.dll      sub-build: Debian's mingw-w64, all static
#   native/macos-x86_64/libiwpp_jni.dylib   sub-build: zig cc (no OpenMP: sequential CPU backend)
#   native/macos-arm64/libiwpp_jni.dylib    sub-build: zig cc
#
# Every sub-build is this same CMake project configured with a toolchain file from
# cmake/toolchains/ and IWPP_CROSS_JNI=ON (java/CMakeLists.txt then builds only the JNI
# library). A platform whose tools are missing is skipped with one message, and the jar
# goes without it. The linux-aarch64 and windows-x86_64 sub-builds also build the C test
# suite (with CMocka built from Debian's source for the target), which the host's ctest
# runs under qemu-aarch64 and wine (tests cross_<platform>_c_suite).
include_guard(GLOBAL)
include(ExternalProject)

option(IWPP_CROSS_NATIVES "Cross-build the other platforms' native libraries for the jar" ON)
set(IWPP_CROSS_PLATFORMS "linux-aarch64;windows-x86_64;macos-x86_64;macos-arm64" CACHE STRING
    "Platforms cross-built for the jar (IWPP_CROSS_NATIVES)")
set(IWPP_CROSS_TEST_THREADS "1,3" CACHE STRING "CPU thread counts of the cross-built C suites")
set(IWPP_CMOCKA_SOURCE_DIR "" CACHE PATH
    "CMocka's source (scripts/setup.sh puts Debian's under /usr/local/src/iwpp/) for the cross tests")
set(IWPP_ZIG_CC ${CMAKE_CURRENT_LIST_DIR}/toolchains/zig-cc)
set(IWPP_JNI_VERSION_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/jni/exports.map)

# Is zig there (PyPI's ziglang, or $ZIG)? Asked once per configure run (a later install is seen).
function(iwpp_have_zig out)
  get_property(known GLOBAL PROPERTY IWPP_ZIG_WORKS SET)
  if(NOT known)
    execute_process(COMMAND ${IWPP_ZIG_CC} --version RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
      set_property(GLOBAL PROPERTY IWPP_ZIG_WORKS ON)
    else()
      set_property(GLOBAL PROPERTY IWPP_ZIG_WORKS OFF)
    endif()
  endif()
  get_property(works GLOBAL PROPERTY IWPP_ZIG_WORKS)
  set(${out} ${works} PARENT_SCOPE)
endfunction()

# Links libiwpp_jni.so with zig cc for a glibc target (e.g. x86_64-linux-gnu.2.17): the
# objects of the glue and the library (minigomp among them), only Java_* exported, nothing
# left undefined. Extra arguments: more objects and libraries.
function(iwpp_zig_link_jni output triple)
  set(objects $<TARGET_OBJECTS:iwpp_jni_glue> ${IWPP_ALL_OBJECTS})
  if(NOT IWPP_OPENMP_RUNTIME STREQUAL "minigomp" AND TARGET iwpp_minigomp)
    list(APPEND objects $<TARGET_OBJECTS:iwpp_minigomp>)
  endif()
  set(targets iwpp_jni_glue iwpp_core)
  foreach(t iwpp_minigomp iwpp_cuda iwpp_opencl iwpp_compat_shm)
    if(TARGET ${t})
      list(APPEND targets ${t})
    endif()
  endforeach()
  get_filename_component(dir ${output} DIRECTORY)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${IWPP_ZIG_CC} -target ${triple} -shared -o ${output} -Wl,-soname,libiwpp_jni.so
            -Wl,--version-script=${IWPP_JNI_VERSION_SCRIPT} -Wl,--no-undefined
            ${objects} ${ARGN} -lpthread -ldl -lm
    DEPENDS ${targets} ${IWPP_JNI_VERSION_SCRIPT} ${objects}
    COMMENT "Linking ${output} for ${triple} (zig)"
    COMMAND_EXPAND_LISTS VERBATIM)
endfunction()

# ---- sub-build side (IWPP_CROSS_JNI=ON): the JNI library of this platform -------------------
function(iwpp_cross_jni)
  find_package(Threads REQUIRED)
  add_library(iwpp_jni_glue OBJECT ${PROJECT_SOURCE_DIR}/java/iwpp_jni.c ${PROJECT_SOURCE_DIR}/java/iwpp_jni_ops.c)
  set_target_properties(iwpp_jni_glue PROPERTIES C_VISIBILITY_PRESET hidden)
  string(REPLACE "|" ";" jni_dirs "${IWPP_JNI_INCLUDE_DIRS}")
  target_include_directories(iwpp_jni_glue PRIVATE ${jni_dirs} ${IWPP_JNI_HEADER_DIR})
  target_link_libraries(iwpp_jni_glue PRIVATE iwpp_static)
  set(out ${CMAKE_BINARY_DIR}/jni)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    iwpp_zig_link_jni(${out}/libiwpp_jni.so ${IWPP_ZIG_TARGET})
    add_custom_target(iwpp_jni ALL DEPENDS ${out}/libiwpp_jni.so)
  else()
    if(APPLE)
      add_library(iwpp_jni SHARED $<TARGET_OBJECTS:iwpp_jni_glue>) # a dylib: zig links no -bundle
    else()
      add_library(iwpp_jni MODULE $<TARGET_OBJECTS:iwpp_jni_glue>)
    endif()
    target_link_libraries(iwpp_jni PRIVATE iwpp_static Threads::Threads)
    set_target_properties(iwpp_jni PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${out} RUNTIME_OUTPUT_DIRECTORY ${out}
                                              OUTPUT_NAME iwpp_jni)
    if(WIN32)
      set_target_properties(iwpp_jni PROPERTIES PREFIX "" SUFFIX ".dll")
    elseif(APPLE)
      set_target_properties(iwpp_jni PROPERTIES PREFIX "lib" SUFFIX ".dylib" INSTALL_NAME_DIR "@rpath"
                                                BUILD_WITH_INSTALL_NAME_DIR ON)
    endif()
  endif()
endfunction()

# ---- host side -------------------------------------------------------------------------------
function(iwpp_native_file platform out)
  if(platform MATCHES "^windows")
    set(${out} iwpp_jni.dll PARENT_SCOPE)
  elseif(platform MATCHES "^macos")
    set(${out} libiwpp_jni.dylib PARENT_SCOPE)
  else()
    set(${out} libiwpp_jni.so PARENT_SCOPE)
  endif()
endfunction()

# What a platform's sub-build needs here; sets ${ok} and ${why}.
function(iwpp_cross_tools platform ok why)
  iwpp_have_zig(zig)
  set(need "")
  if(platform STREQUAL "linux-aarch64")
    find_program(IWPP_AARCH64_GCC aarch64-linux-gnu-gcc)
    if(NOT IWPP_AARCH64_GCC)
      list(APPEND need "aarch64-linux-gnu-gcc (Debian: gcc-aarch64-linux-gnu)")
    endif()
    if(NOT zig)
      list(APPEND need "zig (PyPI: ziglang)")
    endif()
  elseif(platform STREQUAL "windows-x86_64")
    find_program(IWPP_MINGW_GCC x86_64-w64-mingw32-gcc-posix)
    if(NOT IWPP_MINGW_GCC)
      list(APPEND need "x86_64-w64-mingw32-gcc-posix (Debian: gcc-mingw-w64-x86-64-posix)")
    endif()
  elseif(platform MATCHES "^macos-")
    if(NOT zig)
      list(APPEND need "zig (PyPI: ziglang)")
    endif()
  else()
    list(APPEND need "a toolchain file cmake/toolchains/${platform}.cmake")
  endif()
  if(need)
    set(${ok} OFF PARENT_SCOPE)
    string(REPLACE ";" ", " need "${need}")
    set(${why} "missing ${need}; scripts/setup.sh installs it" PARENT_SCOPE)
  else()
    set(${ok} ON PARENT_SCOPE)
  endif()
endfunction()

# Before plugin/: the list "platform|file" the jar packs (IWPP_JAR_NATIVES) and what it waits for.
macro(iwpp_jar_natives_plan)
  iwpp_have_zig(_iwpp_zig)
  set(IWPP_JAR_NATIVES "")
  set(IWPP_JAR_NATIVE_DEPENDS "")
  set(IWPP_CROSS_BUILT "")
  if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux" OR NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
    message(FATAL_ERROR "IWPP: the jar is built on linux-x86_64 (this is ${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR})")
  endif()
  if(_iwpp_zig AND OpenMP_C_FOUND AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
    set(IWPP_PORTABLE_LINUX_JNI ${CMAKE_BINARY_DIR}/natives/linux-x86_64/libiwpp_jni.so)
    list(APPEND IWPP_JAR_NATIVES "linux-x86_64|${IWPP_PORTABLE_LINUX_JNI}")
    list(APPEND IWPP_JAR_NATIVE_DEPENDS iwpp_jni_portable ${IWPP_PORTABLE_LINUX_JNI})
    message(STATUS "IWPP: jar native linux-x86_64: linked by zig for glibc 2.17, OpenMP (minigomp) and C++ runtime inside")
  else()
    list(APPEND IWPP_JAR_NATIVES "linux-x86_64|$<TARGET_FILE:iwpp_jni>")
    message(WARNING "IWPP: jar native linux-x86_64 is this machine's build (needs this glibc, libgomp"
                    " and libstdc++): zig (PyPI: ziglang), gcc and OpenMP are needed for the portable"
                    " one; scripts/setup.sh installs them")
  endif()
  if(IWPP_CROSS_NATIVES)
    foreach(_p IN LISTS IWPP_CROSS_PLATFORMS)
      iwpp_cross_tools(${_p} _ok _why)
      if(_ok)
        iwpp_native_file(${_p} _f)
        list(APPEND IWPP_JAR_NATIVES "${_p}|${CMAKE_BINARY_DIR}/natives/${_p}/jni/${_f}")
        list(APPEND IWPP_JAR_NATIVE_DEPENDS iwpp_native_${_p})
        list(APPEND IWPP_CROSS_BUILT ${_p})
        message(STATUS "IWPP: jar native ${_p}: cross-built in natives/${_p}")
      else()
        message(WARNING "IWPP: jar native ${_p} skipped: ${_why}")
      endif()
    endforeach()
  else()
    message(STATUS "IWPP: other platforms' natives not built (IWPP_CROSS_NATIVES=OFF)")
  endif()
  string(REPLACE ";" "," IWPP_JAR_NATIVES "${IWPP_JAR_NATIVES}")
endmacro()

# After plugin/ (javac's JNI header exists as a target): the link and the sub-builds.
function(iwpp_jar_natives_build)
  if(IWPP_PORTABLE_LINUX_JNI)
    set(extra "")
    if(IWPP_HAVE_CUDA)
      # cudart_static and the CUDA objects' host code need a C++ ABI runtime: zig's, static;
      # its shm_open/shm_unlink (librt before glibc 2.34) come from native/compat/shm.c.
      add_library(iwpp_compat_shm OBJECT ${PROJECT_SOURCE_DIR}/native/compat/shm.c)
      list(APPEND extra $<TARGET_OBJECTS:iwpp_compat_shm> $<TARGET_FILE:CUDA::cudart_static> -lc++)
    endif()
    iwpp_zig_link_jni(${IWPP_PORTABLE_LINUX_JNI} x86_64-linux-gnu.2.17 ${extra})
    add_custom_target(iwpp_jni_portable ALL DEPENDS ${IWPP_PORTABLE_LINUX_JNI})
  endif()

  get_target_property(jni_header_dir iwpp_jni_headers INTERFACE_INCLUDE_DIRECTORIES)
  # The OpenCL headers alone (not the rest of /usr/include, which is this system's libc).
  find_path(IWPP_HOST_OPENCL_INCLUDE NAMES CL/cl.h)
  set(ocl_include "")
  if(IWPP_HOST_OPENCL_INCLUDE)
    set(ocl_include ${CMAKE_BINARY_DIR}/natives/opencl-include)
    file(COPY ${IWPP_HOST_OPENCL_INCLUDE}/CL DESTINATION ${ocl_include})
  endif()
  if(NOT IWPP_CMOCKA_SOURCE_DIR)
    file(GLOB _cm LIST_DIRECTORIES true /usr/local/src/iwpp/cmocka-*)
    foreach(d IN LISTS _cm)
      if(EXISTS ${d}/src/cmocka.c)
        set(IWPP_CMOCKA_SOURCE_DIR ${d} CACHE PATH "" FORCE)
      endif()
    endforeach()
  endif()
  foreach(p IN LISTS IWPP_CROSS_BUILT)
    set(base ${CMAKE_BINARY_DIR}/natives/${p})
    set(toolchain ${PROJECT_SOURCE_DIR}/cmake/toolchains/${p}.cmake)
    iwpp_native_file(${p} file)
    set(jni_md ${JAVA_INCLUDE_PATH2}) # the JDK's own (linux)
    if(p MATCHES "^windows")
      set(jni_md ${PROJECT_SOURCE_DIR}/cmake/jni/win32)
    elseif(p MATCHES "^macos")
      set(jni_md ${PROJECT_SOURCE_DIR}/cmake/jni/darwin)
    endif()
    set(args
      -DCMAKE_TOOLCHAIN_FILE:FILEPATH=${toolchain}
      -DCMAKE_BUILD_TYPE:STRING=Release
      -DIWPP_CROSS_JNI:BOOL=ON
      -DIWPP_ENABLE_CUDA:BOOL=OFF
      -DIWPP_BUILD_BENCH:BOOL=OFF
      -DIWPP_JNI_INCLUDE_DIRS:STRING=${jni_md}|${JAVA_INCLUDE_PATH}
      -DIWPP_JNI_HEADER_DIR:PATH=${jni_header_dir}
      -DIWPP_OPENCL_INCLUDE_DIR:PATH=${ocl_include}
      -DIWPP_TEST_CPU_THREADS:STRING=${IWPP_CROSS_TEST_THREADS}
      -DIWPP_TEST_OPENCL_CONFIGS:STRING=queue) # PoCL through wine is slow: the default variant only
    set(deps iwpp_plugin_classes)
    set(tests OFF)
    if(p MATCHES "^macos")
      list(APPEND args -DIWPP_BUILD_TESTS:BOOL=OFF)
    else()
      list(APPEND args -DIWPP_OPENMP_RUNTIME:STRING=minigomp)
      set(emulator qemu-aarch64)
      if(p MATCHES "^windows")
        set(emulator /usr/lib/wine/wine64)
      endif()
      find_program(_emu_${p} ${emulator})
      if(IWPP_BUILD_TESTS AND IWPP_CMOCKA_SOURCE_DIR AND _emu_${p})
        set(tests ON)
        ExternalProject_Add(iwpp_cmocka_${p}
          SOURCE_DIR ${IWPP_CMOCKA_SOURCE_DIR}
          BINARY_DIR ${base}/cmocka-build
          INSTALL_DIR ${base}/cmocka
          CMAKE_ARGS -DCMAKE_TOOLCHAIN_FILE=${toolchain} -DCMAKE_BUILD_TYPE=Release
                     -DCMAKE_INSTALL_PREFIX=<INSTALL_DIR> -DWITH_STATIC_LIB=ON -DWITH_EXAMPLES=OFF
                     -DUNIT_TESTING=OFF -DCMAKE_POLICY_DEFAULT_CMP0063=NEW
          BUILD_BYPRODUCTS ${base}/cmocka/lib/libcmocka-static.a)
        list(APPEND deps iwpp_cmocka_${p})
        list(APPEND args -DIWPP_BUILD_TESTS:BOOL=ON
                         -DIWPP_CMOCKA_LIBRARY:FILEPATH=${base}/cmocka/lib/libcmocka-static.a
                         -DIWPP_CMOCKA_INCLUDE_DIR:PATH=${base}/cmocka/include)
      else()
        list(APPEND args -DIWPP_BUILD_TESTS:BOOL=OFF)
      endif()
      if(IWPP_BUILD_TESTS AND NOT tests)
        message(WARNING "IWPP: ${p}: the C suite is not built (it needs CMocka's source in "
                        "/usr/local/src/iwpp and ${emulator}; scripts/setup.sh installs them)")
      endif()
    endif()
    ExternalProject_Add(iwpp_native_${p}
      SOURCE_DIR ${PROJECT_SOURCE_DIR}
      BINARY_DIR ${base}
      LIST_SEPARATOR |
      CMAKE_CACHE_ARGS ${args}
      INSTALL_COMMAND ""
      BUILD_ALWAYS ON
      DEPENDS ${deps}
      BUILD_BYPRODUCTS ${base}/jni/${file})
    if(tests)
      add_test(NAME cross_${p}_c_suite
               COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${base} --output-on-failure -j 2)
      set_tests_properties(cross_${p}_c_suite PROPERTIES TIMEOUT 1800 LABELS "cross"
                           ENVIRONMENT "WINEDEBUG=-all;IWPP_TEST_EMULATED=1")
      if(p MATCHES "^windows")
        # wine makes its prefix (~/.wine) on first use: once, before the suite's parallel tests.
        add_test(NAME cross_${p}_wineprefix COMMAND ${_emu_${p}} wineboot --init)
        set_tests_properties(cross_${p}_wineprefix PROPERTIES TIMEOUT 600 LABELS "cross"
                             ENVIRONMENT "WINEDEBUG=-all" FIXTURES_SETUP wineprefix)
        set_tests_properties(cross_${p}_c_suite PROPERTIES FIXTURES_REQUIRED wineprefix)
      endif()
    endif()
  endforeach()
endfunction()
