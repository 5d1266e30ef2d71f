/* loader.c - dlopen the OpenCL ICD loader and resolve the functions we use. */
#define _POSIX_C_SOURCE 200809L
#include "loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static iwpp_ocl_api g_api;
static int g_ok;
static char g_why[512];

static void load_once(void)
{
    const char *names[] = {"libOpenCL.so.1", "libOpenCL.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; ++i)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(g_why, sizeof g_why,
                 "OpenCL: no ICD loader found (libOpenCL.so.1 missing: %s); install an OpenCL "
                 "runtime, e.g. ocl-icd-libopencl1 with pocl-opencl-icd or a GPU driver",
                 e ? e : "dlopen failed");
        return;
    }
#define IWPP_OCL_RESOLVE(name)                                                                     \
    {                                                                                              \
        void *sym = dlsym(lib, #name);                                                             \
        if (!sym) {                                                                                \
            snprintf(g_why, sizeof g_why,                                                          \
                     "OpenCL: the ICD loader lacks %s (an OpenCL 1.2 loader is needed)", #name);   \
            dlclose(lib);                                                                          \
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
