// ringlet_source.c — the kernel side of dispatch sources: poll requests on the
// manager's ring, readiness estimates, signals (signalfd plus a chaining handler),
// pidfds, inotify and the wall-clock change watch. See include/ringlet.h.
#include "ringlet.h"
#include "ringlet_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <stdint.h>
#include <linux/sockios.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

// MARK: Ring requests (the ring's owner only)

struct io_uring *rl_ring_uring(rl_ring *ring);

int rl_ring_prep_poll(rl_ring *ring, int fd, unsigned int events, int multishot, unsigned long long user_data) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(rl_ring_uring(ring));
    if (!sqe) {
        io_uring_submit(rl_ring_uring(ring));
        sqe = io_uring_get_sqe(rl_ring_uring(ring));
        if (!sqe) return -EBUSY;
    }
    if (multishot) {
        io_uring_prep_poll_multishot(sqe, fd, events);
    } else {
        io_uring_prep_poll_add(sqe, fd, events);
    }
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

int rl_ring_prep_poll_remove(rl_ring *ring, unsigned long long target, unsigned long long user_data) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(rl_ring_uring(ring));
    if (!sqe) {
        io_uring_submit(rl_ring_uring(ring));
        sqe = io_uring_get_sqe(rl_ring_uring(ring));
        if (!sqe) return -EBUSY;
    }
    io_uring_prep_poll_remove(sqe, target);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

// MARK: Descriptors

int rl_fd_check(int fd) {
    return fcntl(fd, F_GETFD) < 0 ? -errno : 0;
}

long long rl_fd_readable_bytes(int fd) {
    int n = 0;
    if (ioctl(fd, FIONREAD, &n) < 0) return -errno;
    return n;
}

long long rl_fd_writable_bytes(int fd) {
    int queued = 0;
    int capacity = fcntl(fd, F_GETPIPE_SZ);
    if (capacity >= 0) {
        if (ioctl(fd, FIONREAD, &queued) < 0) return -errno;
        return capacity > queued ? capacity - queued : 0;
    }
    socklen_t length = sizeof capacity;
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &capacity, &length) == 0) {
        if (ioctl(fd, SIOCOUTQ, &queued) < 0) return -errno;
        return capacity > queued ? capacity - queued : 0;
    }
    return -ENOTSUP;
}

int rl_fd_poll_now(int fd, unsigned int events) {
    struct pollfd p = { .fd = fd, .events = (short)events, .revents = 0 };
    for (;;) {
        int r = poll(&p, 1, 0);
        if (r >= 0) return r == 0 ? 0 : p.revents;
        if (errno != EINTR) return -errno;
    }
}

int rl_fd_stat(int fd, long long *size, long long *links) {
    struct stat st;
    if (fstat(fd, &st) < 0) return -errno;
    *size = (long long)st.st_size;
    *links = (long long)st.st_nlink;
    return 0;
}

int rl_fd_identity(int fd, unsigned long long *device, unsigned long long *inode) {
    struct stat st;
    if (fstat(fd, &st) < 0) return -errno;
    *device = (unsigned long long)st.st_dev;
    *inode = (unsigned long long)st.st_ino;
    return 0;
}

// MARK: Processes

int rl_pidfd_open(int pid) {
#ifdef SYS_pidfd_open
    long r = syscall(SYS_pidfd_open, pid, 0);
    return r < 0 ? -errno : (int)r;
#else
    (void)pid;
    return -ENOSYS;
#endif
}

// MARK: File-system events (inotify(7))

int rl_inotify_watch_fd(int fd, unsigned int *mask_out) {
    int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (ifd < 0) return -errno;
    char path[64], digits[21];
    rl_join(path, sizeof path, "/proc/self/fd/", rl_decimal(digits, fd), "");
    unsigned int mask = IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT;
    if (inotify_add_watch(ifd, path, mask) < 0) {
        int e = errno;
        close(ifd);
        return -e;
    }
    *mask_out = mask;
    return ifd;
}

long long rl_inotify_take(int ifd) {
    char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    unsigned int mask = 0;
    for (;;) {
        ssize_t n = read(ifd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n < 0 && errno != EAGAIN) return -errno;
            return mask;
        }
        for (char *p = buffer; p < buffer + n;) {
            struct inotify_event *event = (struct inotify_event *)p;
            mask |= event->mask;
            p += sizeof *event + event->len;
        }
    }
}

// MARK: Signals

// Counts of signals caught by the chaining handler, per signal number, and the
// eventfd that wakes the manager: written from signal context (async-signal-safe).
static unsigned int rl_signal_caught[RL_SIGNAL_LIMIT];
static int rl_signal_wake_fd = -1;
static struct sigaction rl_signal_previous[RL_SIGNAL_LIMIT];
static unsigned char rl_signal_installed[RL_SIGNAL_LIMIT];

static void rl_signal_call_previous(int signo, siginfo_t *info, void *context) {
    struct sigaction *previous = &rl_signal_previous[signo];
    if (previous->sa_flags & SA_SIGINFO) {
        if (previous->sa_sigaction) previous->sa_sigaction(signo, info, context);
    } else if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
        previous->sa_handler(signo);
    }
}

static void rl_signal_handler(int signo, siginfo_t *info, void *context) {
    int saved = errno;
    if (signo > 0 && signo < RL_SIGNAL_LIMIT) {
        __atomic_add_fetch(&rl_signal_caught[signo], 1, __ATOMIC_RELEASE);
        if (rl_signal_wake_fd >= 0) {
            unsigned long long one = 1;
            ssize_t ignored = write(rl_signal_wake_fd, &one, sizeof one);
            (void)ignored;
        }
        rl_signal_call_previous(signo, info, context);
    }
    errno = saved;
}

void rl_signal_set_wake_fd(int fd) { __atomic_store_n(&rl_signal_wake_fd, fd, __ATOMIC_RELEASE); }

int rl_signal_class(int signo) {
    if (signo <= 0 || signo >= RL_SIGNAL_LIMIT || signo > SIGRTMAX) return RL_SIGNAL_OUT_OF_RANGE;
    if (signo == SIGKILL || signo == SIGSTOP) return RL_SIGNAL_UNCATCHABLE;
    // Between the standard signals and SIGRTMIN: glibc's own (SIGCANCEL 32, SIGSETXID
    // 33); its sigaction refuses them with EINVAL.
    if (signo >= 32 && signo < SIGRTMIN) return RL_SIGNAL_LIBC_RESERVED;
    return RL_SIGNAL_CATCHABLE;
}

int rl_signal_realtime_min(void) { return SIGRTMIN; }

static int signal_is_catchable(int signo) {
    return rl_signal_class(signo) == RL_SIGNAL_CATCHABLE;
}

int rl_signal_install(int signo) {
    if (!signal_is_catchable(signo)) return -EINVAL;
    if (rl_signal_installed[signo]) return 0;
    struct sigaction current;
    if (sigaction(signo, NULL, &current) < 0) return -errno;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = rl_signal_handler;
    // Standing in front of the program's handler, keep how it wants blocking calls to
    // end (SA_RESTART or EINTR) and which stack it runs on; in front of SIG_DFL or
    // SIG_IGN, restart: those never interrupted a call.
    int handled = (current.sa_flags & SA_SIGINFO) ? current.sa_sigaction != NULL
                                                  : current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
    action.sa_flags = SA_SIGINFO | (handled ? current.sa_flags & (SA_RESTART | SA_ONSTACK) : SA_RESTART);
    sigfillset(&action.sa_mask);
    if (sigaction(signo, &action, &rl_signal_previous[signo]) < 0) return -errno;
    rl_signal_installed[signo] = 1;
    return 0;
}

int rl_signal_uninstall(int signo) {
    if (!signal_is_catchable(signo) || !rl_signal_installed[signo]) return 0;
    struct sigaction current;
    // Put the previous handler back only when ours is still in place: a handler the
    // program installed since then stays.
    if (sigaction(signo, NULL, &current) == 0 && (current.sa_flags & SA_SIGINFO)
        && current.sa_sigaction == rl_signal_handler) {
        sigaction(signo, &rl_signal_previous[signo], NULL);
    }
    rl_signal_installed[signo] = 0;
    return 0;
}

unsigned int rl_signal_take_caught(int signo) {
    if (signo <= 0 || signo >= RL_SIGNAL_LIMIT) return 0;
    return __atomic_exchange_n(&rl_signal_caught[signo], 0, __ATOMIC_ACQ_REL);
}

int rl_signalfd_update(int fd, const unsigned char *watched) {
    sigset_t set;
    sigemptyset(&set);
    for (int signo = 1; signo < RL_SIGNAL_LIMIT; signo++) {
        if (watched[signo] && signal_is_catchable(signo)) sigaddset(&set, signo);
    }
    int r = signalfd(fd, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    return r < 0 ? -errno : r;
}

int rl_signalfd_take(int fd, unsigned int *counts) {
    struct signalfd_siginfo infos[16];
    for (;;) {
        ssize_t n = read(fd, infos, sizeof infos);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return (n < 0 && errno != EAGAIN) ? -errno : 0;
        for (size_t i = 0; i < (size_t)n / sizeof infos[0]; i++) {
            int signo = (int)infos[i].ssi_signo;
            if (signo <= 0 || signo >= RL_SIGNAL_LIMIT) continue;
            counts[signo] += 1;
            // The signalfd may take a process-directed signal before the thread the
            // kernel chose to run the handler on does: the program's handler is then
            // called here (on the manager thread, outside signal context), with a
            // real context from getcontext(3), so that it still sees every signal.
            if (!rl_signal_installed[signo]) continue;
            siginfo_t info;
            memset(&info, 0, sizeof info);
            info.si_signo = signo;
            info.si_code = infos[i].ssi_code;
            info.si_pid = (pid_t)infos[i].ssi_pid;
            info.si_uid = (uid_t)infos[i].ssi_uid;
            info.si_value.sival_ptr = (void *)(uintptr_t)infos[i].ssi_ptr;
            ucontext_t context;
            getcontext(&context);
            rl_signal_call_previous(signo, &info, &context);
        }
    }
}

void rl_signal_block_asynchronous(void) {
    sigset_t set;
    sigfillset(&set);
    // Faults, abort(3) and SIGPIPE belong to the thread that caused them; SIGPROF
    // samples the thread that ran. libdispatch leaves the same ones unblocked
    // (_dispatch_sigmask, queue.c).
    static const int synchronous[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT, SIGPIPE, SIGPROF };
    for (size_t i = 0; i < sizeof synchronous / sizeof synchronous[0]; i++) sigdelset(&set, synchronous[i]);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

// MARK: Wall-clock changes (timerfd(2), TFD_TIMER_CANCEL_ON_SET)

int rl_clock_change_watch(int fd) {
    if (fd < 0) {
        fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
        if (fd < 0) return -errno;
    } else {
        unsigned long long expirations;
        ssize_t ignored = read(fd, &expirations, sizeof expirations);  // ECANCELED after a change
        (void)ignored;
    }
    // A timer far in the future that never expires: its only purpose is to be
    // cancelled (and made readable) when someone sets the clock.
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    spec.it_value.tv_sec = now.tv_sec + 10LL * 365 * 24 * 3600;
    if (timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, NULL) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}
