/* loader.c - open the OpenCL ICD loader at run time and resolve the functions we use:
 * libOpenCL.so.1 (Linux), OpenCL.dll (Windows), the OpenCL framework (macOS); or the library
 * that $IWPP_OPENCL_LIBRARY names (a vendor's OpenCL outside the system's search path, or the
 * tests' device with a memory cap, tests/ocl_memcap.c). */
#define _POSIX_C_SOURCE 200809L
#include "loader.h"

#include "backend.h" /* iwpp_env */

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
typedef HMODULE lib_handle;
static lib_handle lib_open(const char *name) { return LoadLibraryA(name); }
static void *lib_sym(lib_handle h, const char *name)
{
    FARPROC f = GetProcAddress(h, name);
    void *p;
    memcpy(&p, &f, sizeof p);
    return p;
}
static void lib_close(lib_handle h) { FreeLibrary(h); }
static const char *lib_error(void) { return "LoadLibrary failed"; }
#define IWPP_OCL_NAMES {"OpenCL.dll"}
#define IWPP_OCL_WANTED "OpenCL.dll"
#define IWPP_OCL_HINT "install your GPU's driver (it brings OpenCL.dll)"
#else
#include <dlfcn.h>
typedef void *lib_handle;
static lib_handle lib_open(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static void *lib_sym(lib_handle h, const char *name) { return dlsym(h, name); }
static void lib_close(lib_handle h) { dlclose(h); }
static const char *lib_error(void) { return dlerror(); }
#ifdef __APPLE__
#define IWPP_OCL_NAMES {"/System/Library/Frameworks/OpenCL.framework/OpenCL", "libOpenCL.dylib"}
#define IWPP_OCL_WANTED "the OpenCL framework"
#define IWPP_OCL_HINT "macOS ships it in /System/Library/Frameworks"
#else
#define IWPP_OCL_NAMES {"libOpenCL.so.1", "libOpenCL.so"}
#define IWPP_OCL_WANTED "libOpenCL.so.1"
#define IWPP_OCL_HINT "install an OpenCL runtime, e.g. ocl-icd-libopencl1 with pocl-opencl-icd or a GPU driver"
#endif
#endif

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static iwpp_ocl_api g_api;
static int g_ok;
static char g_why[512];

static void load_once(void)
{
    const char *names[] = IWPP_OCL_NAMES;
    lib_handle lib = NULL;
    const char *chosen = iwpp_env("IWPP_OPENCL_LIBRARY");
    if (chosen && chosen[0]) {
        /* the one named, or none: falling back to another would hide a wrong path */
        if (!(lib = lib_open(chosen))) {
            const char *e = lib_error();
            snprintf(g_why, sizeof g_why, "OpenCL: IWPP_OPENCL_LIBRARY names %s, which does not load (%s)", chosen,
                     e ? e : "cannot open it");
            return;
        }
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; ++i)
        lib = lib_open(names[i]);
    if (!lib) {
        const char *e = lib_error();
        snprintf(g_why, sizeof g_why, "OpenCL: no ICD loader found (%s missing: %s); %s",
                 IWPP_OCL_WANTED, e ? e : "cannot open it", IWPP_OCL_HINT);
        return;
    }
#define IWPP_OCL_RESOLVE(name)                                                                     \
    {                                                                                              \
        void *sym = lib_sym(lib, #name);                                                             \
        if (!sym) {                                                                                \
            snprintf(g_why, sizeof g_why,                                                          \
                     "OpenCL: the ICD loader lacks %s (an OpenCL 1.2 loader is needed)", #name);   \
            lib_close(lib);                                                                        \
            return;                                                                                \
        }                                                                                          \
        memcpy(&g_api.name, &sym, sizeof sym);                                                     \
    }
    IWPP_OCL_FUNCTIONS(IWPP_OCL_RESOLVE)
#undef IWPP_OCL_RESOLVE
    g_ok = 1; /* the library stays loaded for the life of the process */
}

const iwpp_ocl_api *iwpp_ocl_load(char *why, size_t why_size)
{
    pthread_once(&g_once, load_once);
    if (!g_ok) {
        if (why && why_size) snprintf(why, why_size, "%s", g_why);
        return NULL;
    }
    return &g_api;
}

const char *iwpp_ocl_errname(cl_int err)
{
    switch (err) {
#define E(x) case x: return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_BUILD_PROGRAM_FAILURE)
    E(CL_MAP_FAILURE) E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM)
    E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT) E(CL_INVALID_QUEUE_PROPERTIES)
    E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR) E(CL_INVALID_MEM_OBJECT)
    E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS)
    E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
    E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
    E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
    E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
    E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT)
    E(CL_INVALID_OPERATION)
    E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
#undef E
    default: return "unknown OpenCL error";
    }
}
