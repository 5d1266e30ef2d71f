/*
 * ocl_memcap.c - an OpenCL device with less memory, for tests (test_budget.c): a library that the
 * OpenCL backend loads instead of the system's ICD loader (IWPP_OPENCL_LIBRARY). It links against
 * that loader, so every entry point it does not define is the loader's own; it defines only
 * clCreateBuffer and clReleaseMemObject, to count the device buffers alive (those without host
 * memory), keep their peak, and refuse a buffer that would take them past a cap with
 * CL_MEM_OBJECT_ALLOCATION_FAILURE, as a full device does.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "ocl_memcap.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t g_live, g_peak, g_cap; /* g_cap 0: no cap */

typedef cl_mem(CL_API_CALL *create_fn)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
typedef cl_int(CL_API_CALL *release_fn)(cl_mem);

/* The loader's own entry points (the next definitions after this library's). */
static create_fn real_create(void)
{
    static create_fn f;
    if (!f) *(void **)&f = dlsym(RTLD_NEXT, "clCreateBuffer");
    return f;
}
static release_fn real_release(void)
{
    static release_fn f;
    if (!f) *(void **)&f = dlsym(RTLD_NEXT, "clReleaseMemObject");
    return f;
}

static int on_device(cl_mem_flags flags) { return !(flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)); }

CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
                                               cl_int *errcode_ret)
{
    const int counted = on_device(flags);
    pthread_mutex_lock(&g_lock);
    const int refuse = counted && g_cap && g_live + size > g_cap;
    if (counted && !refuse) g_live += size; /* reserved before the call: two threads cannot both pass */
    if (g_live > g_peak) g_peak = g_live;
    pthread_mutex_unlock(&g_lock);
    if (refuse) {
        if (errcode_ret) *errcode_ret = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        return NULL;
    }
    if (counted && getenv("IWPP_MEMCAP_VERBOSE")) /* what is allocated, when a test wants to know */
        fprintf(stderr, "memcap: +%zu (%zu alive)\n", size, g_live);
    cl_mem m = real_create()(context, flags, size, host_ptr, errcode_ret);
    if (!m && counted) {
        pthread_mutex_lock(&g_lock);
        g_live -= size;
        pthread_mutex_unlock(&g_lock);
    }
    return m;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseMemObject(cl_mem mem)
{
    cl_mem_flags flags = 0;
    size_t size = 0;
    /* the library never retains a buffer (clRetainMemObject is not among its entry points), so
       its release is its last: the buffer is no longer its own, even where the runtime still
       holds a reference of its own for a command in flight (counting by the runtime's reference
       count then missed buffers now and then) */
    if (mem && clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof flags, &flags, NULL) == CL_SUCCESS &&
        clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, NULL) == CL_SUCCESS && on_device(flags)) {
        pthread_mutex_lock(&g_lock);
        g_live -= size;
        pthread_mutex_unlock(&g_lock);
    }
    return real_release()(mem);
}

void iwpp_memcap_set(size_t cap)
{
    pthread_mutex_lock(&g_lock);
    g_cap = cap;
    pthread_mutex_unlock(&g_lock);
}

size_t iwpp_memcap_live(void)
{
    pthread_mutex_lock(&g_lock);
    const size_t v = g_live;
    pthread_mutex_unlock(&g_lock);
    return v;
}

size_t iwpp_memcap_peak_reset(void)
{
    pthread_mutex_lock(&g_lock);
    const size_t v = g_peak;
    g_peak = g_live;
    pthread_mutex_unlock(&g_lock);
    return v;
}
