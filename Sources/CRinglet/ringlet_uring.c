// ringlet_uring.c — io_uring probing and the manager thread's ring with liburing:
// setup, timeouts, reads, eventfds. Source requests are in ringlet_source.c.
#include "ringlet.h"
#include "ringlet_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <liburing.h>
#include <string.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

int rl_uring_probe(struct rl_uring_info *info) {
    memset(info, 0, sizeof *info);
    struct io_uring ring;
    struct io_uring_params params;
    memset(&params, 0, sizeof params);
    int r = io_uring_queue_init_params(4, &ring, &params);
    if (r < 0) return r;
    info->features = params.features;
    struct io_uring_probe *probe = io_uring_get_probe_ring(&ring);
    if (probe) {
        info->last_opcode = probe->last_op;
        info->supports_timeout = io_uring_opcode_supported(probe, IORING_OP_TIMEOUT);
        info->supports_read = io_uring_opcode_supported(probe, IORING_OP_READ);
        io_uring_free_probe(probe);
    }
    // Multishot poll has no probe bit; it arrived with IORING_FEAT_FAST_POLL's
    // successor kernels (5.13). IORING_FEAT_NATIVE_WORKERS (5.12) is the closest marker.
    info->supports_poll_multishot = (params.features & IORING_FEAT_NATIVE_WORKERS) != 0;
    io_uring_queue_exit(&ring);
    return 0;
}

int rl_uring_disabled_sysctl(void) {
    int fd = open("/proc/sys/kernel/io_uring_disabled", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char c = 0;
    ssize_t n = read(fd, &c, 1);
    close(fd);
    return n == 1 ? c - '0' : -1;
}

struct rl_ring {
    struct io_uring ring;
    // The kernel copies the timespec when it prepares a timeout, so one slot
    // serves every rl_ring_prep_timeout call (io_timeout_prep, io_uring/timeout.c).
    struct __kernel_timespec timeout;
};

struct io_uring *rl_ring_uring(rl_ring *ring) { return &ring->ring; }

rl_ring *rl_ring_create(unsigned int sq_entries, unsigned int cq_entries, unsigned int *setup_flags,
                        unsigned int *features, int *error) {
    static const unsigned int attempts[] = {
        IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
        IORING_SETUP_COOP_TASKRUN,
        0,
    };
    rl_ring *ring = calloc(1, sizeof *ring);
    if (!ring) { *error = -ENOMEM; return NULL; }
    int r = -EINVAL;
    for (unsigned int i = 0; i < sizeof attempts / sizeof attempts[0]; i++) {
        struct io_uring_params params;
        memset(&params, 0, sizeof params);
        params.flags = attempts[i] | IORING_SETUP_CQSIZE;
        params.cq_entries = cq_entries;
        r = io_uring_queue_init_params(sq_entries, &ring->ring, &params);
        if (r == 0) {
            *setup_flags = attempts[i];
            *features = params.features;
            *error = 0;
            return ring;
        }
        // Only an unknown flag (EINVAL) is worth another attempt; EPERM, ENOSYS or
        // ENOMEM would fail the same way without it.
        if (r != -EINVAL) break;
    }
    free(ring);
    *error = r;
    return NULL;
}

void rl_ring_destroy(rl_ring *ring) {
    io_uring_queue_exit(&ring->ring);
    free(ring);
}

static struct io_uring_sqe *rl_ring_sqe(rl_ring *ring) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring->ring);
    if (!sqe) {
        io_uring_submit(&ring->ring);
        sqe = io_uring_get_sqe(&ring->ring);
    }
    return sqe;
}

int rl_ring_prep_timeout(rl_ring *ring, unsigned long long deadline_ns, unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_ring_sqe(ring);
    if (!sqe) return -EBUSY;
    ring->timeout.tv_sec = (long long)(deadline_ns / 1000000000ULL);
    ring->timeout.tv_nsec = (long long)(deadline_ns % 1000000000ULL);
    io_uring_prep_timeout(sqe, &ring->timeout, 0, IORING_TIMEOUT_ABS);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

int rl_ring_prep_timeout_remove(rl_ring *ring, unsigned long long target, unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_ring_sqe(ring);
    if (!sqe) return -EBUSY;
    io_uring_prep_timeout_remove(sqe, target, 0);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

int rl_ring_prep_read(rl_ring *ring, int fd, void *buffer, unsigned int length, unsigned long long offset,
                      unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_ring_sqe(ring);
    if (!sqe) return -EBUSY;
    io_uring_prep_read(sqe, fd, buffer, length, offset);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

int rl_ring_prep_rw(rl_ring *ring, int write, int fd, void *buffer, unsigned int length,
                    unsigned long long offset, unsigned short ioprio, unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_ring_sqe(ring);
    if (!sqe) return -EBUSY;
    if (write) io_uring_prep_write(sqe, fd, buffer, length, offset);
    else io_uring_prep_read(sqe, fd, buffer, length, offset);
    // The I/O priority of the request (io_uring_enter(2): "ioprio"); checked by the
    // kernel like ioprio_set(2), so the idle and best-effort classes need no privilege.
    sqe->ioprio = ioprio;
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

int rl_ring_prep_cancel(rl_ring *ring, unsigned long long target, unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_ring_sqe(ring);
    if (!sqe) return -EBUSY;
    io_uring_prep_cancel64(sqe, target, 0);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

int rl_ring_prep_poll_in(rl_ring *ring, int fd, unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_ring_sqe(ring);
    if (!sqe) return -EBUSY;
    io_uring_prep_poll_add(sqe, fd, POLLIN);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

// IORING_OP_FUTEX_WAKE's fields (io_futex_prep, io_uring/futex.c): addr the futex word,
// addr2 how many to wake, addr3 the bitset, fd the FUTEX2_* flags.
enum { RL_FUTEX2_SIZE_U32 = 0x02, RL_FUTEX2_PRIVATE = 128 };

int rl_ring_supports_futex_wake(rl_ring *ring) {
    struct io_uring_probe *probe = io_uring_get_probe_ring(&ring->ring);
    if (!probe) return 0;
    int supported = io_uring_opcode_supported(probe, RL_IORING_OP_FUTEX_WAKE);
    io_uring_free_probe(probe);
    return supported;
}

int rl_ring_prep_futex_wake(rl_ring *ring, unsigned int *word, unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_ring_sqe(ring);
    if (!sqe) return -EBUSY;
    io_uring_prep_rw(RL_IORING_OP_FUTEX_WAKE, sqe, RL_FUTEX2_SIZE_U32 | RL_FUTEX2_PRIVATE, word, 0, 1);
    sqe->addr3 = 0xffffffffu;  // FUTEX_BITSET_MATCH_ANY: the waiters use plain FUTEX_WAIT
    // A wake that worked posts nothing; one that failed posts its error.
    sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

int rl_ring_submit_and_wait(rl_ring *ring, unsigned int wait_nr) {
    return io_uring_submit_and_wait(&ring->ring, wait_nr);
}

int rl_ring_next_completion(rl_ring *ring, unsigned long long *user_data, int *result, unsigned int *flags) {
    struct io_uring_cqe *cqe;
    if (io_uring_peek_cqe(&ring->ring, &cqe) != 0 || !cqe) return 0;
    *user_data = io_uring_cqe_get_data64(cqe);
    *result = cqe->res;
    *flags = cqe->flags;
    io_uring_cqe_seen(&ring->ring, cqe);
    return 1;
}

unsigned int rl_ring_overflow_count(rl_ring *ring) {
    return ring->ring.cq.koverflow ? *ring->ring.cq.koverflow : 0;
}

int rl_eventfd_create(void) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

int rl_eventfd_signal(int fd) {
    unsigned long long one = 1;
    for (;;) {
        ssize_t n = write(fd, &one, sizeof one);
        if (n == (ssize_t)sizeof one) return 0;
        if (n < 0 && errno == EINTR) continue;
        // EAGAIN: the counter is at its maximum, so a wake-up is already pending.
        if (n < 0 && errno == EAGAIN) return 0;
        return n < 0 ? -errno : -EIO;
    }
}

int rl_eventfd_drain(int fd) {
    unsigned long long value;
    for (;;) {
        ssize_t n = read(fd, &value, sizeof value);
        if (n == (ssize_t)sizeof value) return 0;
        if (n < 0 && errno == EINTR) continue;
        return n < 0 ? -errno : -EIO;
    }
}

void rl_close(int fd) { close(fd); }

const char *rl_ring_missing_opcode(rl_ring *ring) {
    static const struct { int opcode; const char *name; } needed[] = {
        { IORING_OP_POLL_ADD, "IORING_OP_POLL_ADD (Linux 5.1)" },
        { IORING_OP_POLL_REMOVE, "IORING_OP_POLL_REMOVE (Linux 5.1)" },
        { IORING_OP_TIMEOUT, "IORING_OP_TIMEOUT (Linux 5.4)" },
        { IORING_OP_TIMEOUT_REMOVE, "IORING_OP_TIMEOUT_REMOVE (Linux 5.5)" },
        { IORING_OP_READ, "IORING_OP_READ (Linux 5.6)" },
        { IORING_OP_WRITE, "IORING_OP_WRITE (Linux 5.6)" },
        { IORING_OP_ASYNC_CANCEL, "IORING_OP_ASYNC_CANCEL (Linux 5.5)" },
    };
    struct io_uring_probe *probe = io_uring_get_probe_ring(&ring->ring);
    if (!probe) return 0;  // kernels before 5.6 have no probe; their setup already told
    const char *missing = 0;
    for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++) {
        if (!io_uring_opcode_supported(probe, needed[i].opcode)) { missing = needed[i].name; break; }
    }
    io_uring_free_probe(probe);
    return missing;
}
