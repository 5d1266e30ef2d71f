/* win32.h - the few POSIX pieces the library uses that the Windows C runtime lacks.
 * Force-included into every source of the windows-x86_64 build
 * (cmake/toolchains/windows-x86_64.cmake); nothing here on other systems. */
#ifndef IWPP_COMPAT_WIN32_H
#define IWPP_COMPAT_WIN32_H
#ifdef _WIN32
#include <stddef.h>
#include <stdlib.h>

/* sysconf: the names the library asks for (native/cpu/backend.c, native/error.c). */
#define _SC_PAGESIZE 30
#define _SC_NPROCESSORS_ONLN 84
#define _SC_PHYS_PAGES 85
long iwpp_win32_sysconf(int name);
#define sysconf(name) iwpp_win32_sysconf(name)

/* aligned_alloc: the library asks for cache-line (64-byte) blocks to keep threads' data
   apart and releases them with free(); the Windows C runtime has no aligned allocation
   that free() accepts, so such blocks come from malloc (16-byte aligned): the same
   results, possibly some false sharing. */
#define aligned_alloc(alignment, size) ((void)(alignment), malloc(size))

/* setenv/unsetenv (the tests set the library's IWPP_* variables): the C runtime's
   environment, which getenv reads. */
static inline int iwpp_win32_setenv(const char *name, const char *value, int overwrite)
{
    if (!overwrite && getenv(name)) return 0;
    return _putenv_s(name, value) == 0 ? 0 : -1;
}
static inline int iwpp_win32_unsetenv(const char *name) { return _putenv_s(name, "") == 0 ? 0 : -1; }
#define setenv(name, value, overwrite) iwpp_win32_setenv(name, value, overwrite)
#define unsetenv(name) iwpp_win32_unsetenv(name)

/* timespec_get (C11) is not in msvcrt; winpthreads' clock_gettime gives the same. */
#include <time.h>
#include <pthread_time.h>
#ifndef TIME_UTC
#define TIME_UTC 1
static inline int iwpp_win32_timespec_get(struct timespec *ts, int base)
{
    return base == TIME_UTC && clock_gettime(CLOCK_REALTIME, ts) == 0 ? base : 0;
}
#define timespec_get(ts, base) iwpp_win32_timespec_get(ts, base)
#endif
#endif
#endif
