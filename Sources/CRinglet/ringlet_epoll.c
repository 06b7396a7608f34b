// ringlet_epoll.c — the epoll backend's calls: the epoll set, the timerfd of the one
// armed timeout, reads and writes that never block the manager (RWF_NOWAIT), and the
// blocking ones the I/O helper threads make. See include/ringlet.h for the contracts
// and the Architecture article ("The epoll backend") for why each exists.
#include "ringlet.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int rl_epoll_create(void) {
    int fd = epoll_create1(EPOLL_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int rl_epoll_control(int epfd, int op, int fd, unsigned int events, unsigned long long data) {
    int how;
    switch (op) {
    case RL_EPOLL_ADD: how = EPOLL_CTL_ADD; break;
    case RL_EPOLL_MODIFY: how = EPOLL_CTL_MOD; break;
    case RL_EPOLL_DELETE: how = EPOLL_CTL_DEL; break;
    default: return -EINVAL;
    }
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    // EPOLLIN, EPOLLOUT, EPOLLERR and EPOLLHUP have poll(2)'s values; EPOLLET is added
    // by the caller as RL_EPOLL_EDGE (the same bit).
    event.events = events;
    event.data.u64 = data;
    return epoll_ctl(epfd, how, fd, &event) == 0 ? 0 : -errno;
}

int rl_epoll_wait(int epfd, unsigned long long *data, unsigned int *events, int capacity, int timeout_ms) {
    struct epoll_event ready[64];
    if (capacity > 64) capacity = 64;
    int n = epoll_wait(epfd, ready, capacity, timeout_ms);
    if (n < 0) return -errno;
    for (int i = 0; i < n; i++) {
        data[i] = ready[i].data.u64;
        events[i] = ready[i].events;
    }
    return n;
}

int rl_epoll_wait_data_ns(int epfd, unsigned long long *data, int capacity, long long timeout_ns) {
    struct epoll_event ready[64];
    if (capacity > 64) capacity = 64;
    int n;
#ifdef SYS_epoll_pwait2
    static int no_pwait2;
    if (!__atomic_load_n(&no_pwait2, __ATOMIC_RELAXED)) {
        struct timespec ts, *tsp = NULL;
        if (timeout_ns >= 0) {
            ts.tv_sec = (time_t)(timeout_ns / 1000000000LL);
            ts.tv_nsec = (long)(timeout_ns % 1000000000LL);
            tsp = &ts;
        }
        n = (int)syscall(SYS_epoll_pwait2, epfd, ready, capacity, tsp, NULL, 0);
        // ENOSYS: before Linux 5.11; EPERM: a seccomp filter that does not know it.
        if (n >= 0 || (errno != ENOSYS && errno != EPERM)) goto done;
        __atomic_store_n(&no_pwait2, 1, __ATOMIC_RELAXED);
    }
#endif
    {
        long long ms = timeout_ns < 0 ? -1 : (timeout_ns + 999999LL) / 1000000LL;
        n = epoll_wait(epfd, ready, capacity, ms > 0x7fffffffLL ? 0x7fffffff : (int)ms);
    }
#ifdef SYS_epoll_pwait2
done:
#endif
    if (n < 0) return -errno;
    for (int i = 0; i < n; i++) data[i] = ready[i].data.u64;
    return n;
}

int rl_timerfd_create_monotonic(void) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int rl_timerfd_set_absolute(int fd, unsigned long long deadline_ns) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    // it_value zero disarms; a deadline of 0 (long past: a wall-clock deadline a year
    // ago converts to it) becomes 1 ns, which fires at once. Left at zero it disarmed
    // the one timerfd every timeout shares, and no timer fired again.
    spec.it_value.tv_sec = (time_t)(deadline_ns / 1000000000ULL);
    spec.it_value.tv_nsec = (long)(deadline_ns % 1000000000ULL);
    if (deadline_ns == 0) spec.it_value.tv_nsec = 1;
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL) == 0 ? 0 : -errno;
}

int rl_timerfd_disarm(int fd) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    return timerfd_settime(fd, 0, &spec, NULL) == 0 ? 0 : -errno;
}

long long rl_fd_transfer_nowait(int is_write, int fd, void *buffer, unsigned long long length, long long offset) {
    struct iovec vector = { .iov_base = buffer, .iov_len = (size_t)length };
    for (;;) {
        ssize_t n = is_write ? pwritev2(fd, &vector, 1, (off_t)offset, RWF_NOWAIT)
                          : preadv2(fd, &vector, 1, (off_t)offset, RWF_NOWAIT);
        if (n >= 0) return n;
        if (errno == EOPNOTSUPP && offset < 0) break;
        if (errno != EINTR) return -errno;
    }
    // No RWF_NOWAIT for this file (a FIFO or a terminal on some kernels). Opened
    // O_NONBLOCK, a plain read or write at its position cannot block either: made
    // now, it also finds the end of a FIFO no writer has opened, which epoll never
    // reports as readable.
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || !(flags & O_NONBLOCK)) return -EOPNOTSUPP;
    return rl_fd_transfer_blocking(is_write, fd, buffer, length, -1);
}

long long rl_fd_transfer_blocking(int is_write, int fd, void *buffer, unsigned long long length, long long offset) {
    for (;;) {
        ssize_t n;
        if (offset < 0) {
            n = is_write ? write(fd, buffer, (size_t)length) : read(fd, buffer, (size_t)length);
        } else {
            n = is_write ? pwrite(fd, buffer, (size_t)length, (off_t)offset) : pread(fd, buffer, (size_t)length, (off_t)offset);
        }
        if (n >= 0) return n;
        if (errno != EINTR) return -errno;
    }
}

int rl_thread_set_io_priority(unsigned short ioprio) {
#ifdef SYS_ioprio_set
    // IOPRIO_WHO_PROCESS (1) with who 0: the calling thread (ioprio_set(2)).
    return syscall(SYS_ioprio_set, 1, 0, (int)ioprio) == 0 ? 0 : -errno;
#else
    (void)ioprio;
    return -ENOSYS;
#endif
}
