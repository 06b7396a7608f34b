// File helpers for DispatchIO channels. Reads and writes themselves go through the
// manager's ring (ringlet_uring.c); this is what the channel needs around them.
#include "ringlet.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int rl_fd_describe(int fd, int *kind, long long *position, int *append) {
    struct stat st;
    if (fstat(fd, &st) < 0) return -errno;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -errno;
    *append = (flags & O_APPEND) != 0;
    *position = 0;
    if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
        off_t at = lseek(fd, 0, SEEK_CUR);
        if (at >= 0) {
            *kind = RL_FD_REGULAR;
            *position = at;
            return 0;
        }
    }
    *kind = RL_FD_STREAM;
    return 0;
}

int rl_fd_seek(int fd, long long position) {
    return lseek(fd, (off_t)position, SEEK_SET) < 0 ? -errno : 0;
}

long long rl_fd_position(int fd) {
    off_t at = lseek(fd, 0, SEEK_CUR);
    return at < 0 ? -errno : (long long)at;
}

int rl_open(const char *path, int flags, unsigned int mode) {
    for (;;) {
        int fd = open(path, flags | O_CLOEXEC, (mode_t)mode);
        if (fd >= 0) return fd;
        if (errno != EINTR) return -errno;
    }
}

void rl_free(void *pointer) { free(pointer); }

void rl_munmap(void *pointer, unsigned long long length) { munmap(pointer, (size_t)length); }

