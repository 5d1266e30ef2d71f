/*
 * shm.c - shm_open and shm_unlink for the portable linux-x86_64 JNI library.
 *
 * Why: the static CUDA runtime calls them, and before glibc 2.34 they live in librt.so.1;
 * with these two linked in, the library needs only libc, libm, libdl and libpthread.
 * They do what glibc does on Linux: a POSIX shared memory object is the file of that
 * name in /dev/shm.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int shm_path(const char *name, char *out, size_t size)
{
    while (*name == '/') name++;
    size_t n = strlen(name);
    if (n == 0 || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        errno = EINVAL;
        return -1;
    }
    if (n + sizeof "/dev/shm/" > size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    snprintf(out, size, "/dev/shm/%s", name);
    return 0;
}

int shm_open(const char *name, int oflag, mode_t mode)
{
    char path[4096];
    if (shm_path(name, path, sizeof path) != 0) return -1;
    return open(path, oflag | O_NOFOLLOW | O_CLOEXEC, mode);
}

int shm_unlink(const char *name)
{
    char path[4096];
    if (shm_path(name, path, sizeof path) != 0) return -1;
    int rc = unlink(path);
    if (rc != 0 && errno == EPERM) errno = EACCES;
    return rc;
}
