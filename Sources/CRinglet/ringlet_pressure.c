// ringlet_pressure.c — a PSI trigger on a pressure file (Documentation/accounting/psi.rst
// in the kernel): the file opened for writing, the trigger written with its NUL, and the
// descriptor then signals POLLPRI each time the stall crosses the threshold within the
// window (at most once per window).
#include "ringlet.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int rl_psi_trigger(const char *path, const char *trigger) {
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -errno;
    size_t length = strlen(trigger) + 1;
    ssize_t written;
    do {
        written = write(fd, trigger, length);
    } while (written < 0 && errno == EINTR);
    if (written < 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    return fd;
}

int rl_give_back_pages(void *address, unsigned long long length) {
    return madvise(address, (size_t)length, MADV_DONTNEED) == 0 ? 0 : -errno;
}
