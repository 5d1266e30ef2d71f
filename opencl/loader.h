/*
 * loader.h - the OpenCL entry points this backend uses, resolved at run time
 * from the ICD loader (libOpenCL.so.1, OpenCL.dll, the macOS framework), so that libiwpp has no
 * link-time dependency on OpenCL and loads on machines without it.
 */
#ifndef IWPP_OCL_LOADER_H
#define IWPP_OCL_LOADER_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#if defined(__APPLE__) && !defined(__has_include)
#include <OpenCL/cl.h>
#elif defined(__APPLE__) && !__has_include(<CL/cl.h>)
#include <OpenCL/cl.h> /* Apple's SDK; cross builds use the Khronos headers (CL/cl.h) */
#else
#include <CL/cl.h>
#endif

#include <stddef.h>

/* X(name) for every function we call. */
#define IWPP_OCL_FUNCTIONS(X)                                                                      \
    X(clGetPlatformIDs)                                                                            \
    X(clGetPlatformInfo)                                                                           \
    X(clGetDeviceIDs)                                                                              \
    X(clGetDeviceInfo)                                                                             \
    X(clCreateContext)                                                                             \
    X(clReleaseContext)                                                                            \
    X(clRetainContext)                                                                             \
    X(clCreateCommandQueue)                                                                        \
    X(clReleaseCommandQueue)                                                                       \
    X(clCreateBuffer)                                                                              \
    X(clReleaseMemObject)                                                                          \
    X(clEnqueueWriteBuffer)                                                                        \
    X(clEnqueueReadBuffer)                                                                         \
    X(clEnqueueWriteBufferRect)                                                                    \
    X(clEnqueueReadBufferRect)                                                                     \
    X(clEnqueueCopyBuffer)                                                                         \
    X(clEnqueueFillBuffer)                                                                         \
    X(clCreateProgramWithSource)                                                                   \
    X(clCreateProgramWithBinary)                                                                   \
    X(clGetProgramInfo)                                                                            \
    X(clBuildProgram)                                                                              \
    X(clGetProgramBuildInfo)                                                                       \
    X(clReleaseProgram)                                                                            \
    X(clRetainProgram)                                                                             \
    X(clCreateKernel)                                                                              \
    X(clReleaseKernel)                                                                             \
    X(clSetKernelArg)                                                                              \
    X(clGetKernelWorkGroupInfo)                                                                    \
    X(clEnqueueNDRangeKernel)                                                                      \
    X(clFinish)                                                                                    \
    X(clFlush)                                                                                     \
    X(clWaitForEvents)                                                                             \
    X(clReleaseEvent)                                                                              \
    X(clGetEventProfilingInfo)                                                                     \
    X(clGetKernelInfo)                                                                             \
    X(clEnqueueMarkerWithWaitList)                                                                 \
    X(clEnqueueMapBuffer)                                                                          \
    X(clEnqueueUnmapMemObject)

typedef struct iwpp_ocl_api {
#define IWPP_OCL_MEMBER(name) __typeof__(name) *name;
    IWPP_OCL_FUNCTIONS(IWPP_OCL_MEMBER)
#undef IWPP_OCL_MEMBER
} iwpp_ocl_api;

/**
 * Load the ICD loader once per process (thread-safe). Returns the function
 * table, or NULL with the reason in @p why (if not NULL).
 */
const iwpp_ocl_api *iwpp_ocl_load(char *why, size_t why_size);

/** Short name of an OpenCL error code, e.g. "CL_OUT_OF_RESOURCES". */
const char *iwpp_ocl_errname(cl_int err);

#endif
