/* win32.c - sysconf for the windows-x86_64 build (see win32.h). */
#ifdef _WIN32
#include <windows.h>

long iwpp_win32_sysconf(int name)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    switch (name) {
    case _SC_PAGESIZE: return (long)si.dwPageSize;
    case _SC_NPROCESSORS_ONLN: return (long)si.dwNumberOfProcessors;
    case _SC_PHYS_PAGES: {
        MEMORYSTATUSEX ms;
        ms.dwLength = sizeof ms;
        if (!GlobalMemoryStatusEx(&ms) || si.dwPageSize == 0) return -1;
        unsigned long long pages = ms.ullTotalPhys / si.dwPageSize;
        return pages > 0x7fffffffULL ? 0x7fffffffL : (long)pages;
    }
    default: return -1;
    }
}
#else
typedef int iwpp_win32_compat_unused; /* ISO C: no empty translation unit */
#endif
