// ringlet_uring.c — io_uring probing with liburing. The manager thread's ring
// (submission, completion, timers, sources) will live beside this file.
#include "ringlet.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <string.h>
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
