// ringlet_board.c — what board profiles need from the system: reading profile and
// sysfs files, memory and page size, the kernel release, CPU affinity for big.LITTLE
// placement, and io_uring feature probes for `ringlet board`. See include/ringlet.h.
#include "ringlet.h"
#include "ringlet_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

// The file type of what is not a regular file, as rl_read_file reports it.
static long long rl_not_regular(mode_t mode) {
    return -(RL_NOT_REGULAR_FILE + (long long)((mode & S_IFMT) >> 12));
}

long long rl_read_file(const char *path, unsigned char *buffer, long long capacity) {
    // Look before opening: opening a FIFO blocks until a writer comes, and opening a
    // device can act on it (a tape rewinds, a modem hangs up). Profiles, sysfs and
    // /proc entries are all regular files.
    struct stat before;
    if (stat(path, &before) != 0) return -errno;
    if (!S_ISREG(before.st_mode)) return rl_not_regular(before.st_mode);
    // O_NONBLOCK: should the path be swapped for a FIFO between stat and open, the
    // open returns at once and the fstat below refuses it.
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return -errno;
    struct stat opened;
    if (fstat(fd, &opened) != 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    if (!S_ISREG(opened.st_mode)) {
        close(fd);
        return rl_not_regular(opened.st_mode);
    }
    long long total = 0;
    while (total < capacity) {
        ssize_t n = read(fd, buffer + total, (size_t)(capacity - total));
        if (n < 0) {
            if (errno == EINTR) continue;
            int saved = errno;
            close(fd);
            return -saved;
        }
        if (n == 0) break;
        total += n;
    }
    close(fd);
    return total;
}

long long rl_memory_bytes(void) {
    long pages = sysconf(_SC_PHYS_PAGES);
    long size = sysconf(_SC_PAGESIZE);
    if (pages < 0 || size < 0) return -errno;
    return (long long)pages * (long long)size;
}

long long rl_page_bytes(void) {
    long size = sysconf(_SC_PAGESIZE);
    return size > 0 ? size : 4096;
}

int rl_kernel_release(char *buffer, int capacity) {
    struct utsname names;
    if (capacity <= 0) return -EINVAL;
    if (uname(&names) != 0) return -errno;
    strncpy(buffer, names.release, (size_t)capacity - 1);
    buffer[capacity - 1] = 0;
    return 0;
}

int rl_thread_set_affinity(const int *cpus, int count) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < count; i++) {
        if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE) return -EINVAL;
        CPU_SET(cpus[i], &set);
    }
    // pid 0: the calling thread (sched_setaffinity(2) acts on a thread, not the process).
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -errno;
}

int rl_thread_get_affinity(int tid, int *cpus, int capacity) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(tid, sizeof set, &set) != 0) return -errno;
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && count < capacity; cpu++) {
        if (CPU_ISSET(cpu, &set)) cpus[count++] = cpu;
    }
    return count;
}

int rl_uring_setup_flags_supported(unsigned int flags) {
    struct io_uring ring;
    struct io_uring_params params;
    memset(&params, 0, sizeof params);
    params.flags = flags;
    int r = io_uring_queue_init_params(4, &ring, &params);
    if (r == 0) {
        io_uring_queue_exit(&ring);
        return 1;
    }
    return r == -EINVAL ? 0 : r;
}

// Every operation the manager submits, and WRITE for DispatchIO; rl_ring_missing_opcode checks
// the ones the manager cannot start without, the others are optional (1).
static const struct { int opcode; const char *name; int optional; } rl_used_opcodes[] = {
    { IORING_OP_POLL_ADD, "POLL_ADD (Linux 5.1)" },
    { IORING_OP_POLL_REMOVE, "POLL_REMOVE (Linux 5.1)" },
    { IORING_OP_TIMEOUT, "TIMEOUT (Linux 5.4)" },
    { IORING_OP_TIMEOUT_REMOVE, "TIMEOUT_REMOVE (Linux 5.5)" },
    { IORING_OP_READ, "READ (Linux 5.6)" },
    { IORING_OP_WRITE, "WRITE (Linux 5.6)" },
    { IORING_OP_ASYNC_CANCEL, "ASYNC_CANCEL (Linux 5.5)" },
    { RL_IORING_OP_FUTEX_WAKE, "FUTEX_WAKE (Linux 6.7: the manager wakes workers in its own wait)", 1 },
    { IORING_OP_ACCEPT, "ACCEPT (Linux 5.5; multishot 5.19: sockets)", 1 },
    { IORING_OP_CONNECT, "CONNECT (Linux 5.5: sockets)", 1 },
    { IORING_OP_RECVMSG, "RECVMSG (Linux 5.3: sockets)", 1 },
    { IORING_OP_SENDMSG, "SENDMSG (Linux 5.3: sockets)", 1 },
};

int rl_uring_used_opcode_count(void) { return (int)(sizeof rl_used_opcodes / sizeof rl_used_opcodes[0]); }

const char *rl_uring_used_opcode_name(int i) {
    if (i < 0 || i >= rl_uring_used_opcode_count()) return "";
    return rl_used_opcodes[i].name;
}

int rl_uring_used_opcode_optional(int i) {
    return i >= 0 && i < rl_uring_used_opcode_count() && rl_used_opcodes[i].optional;
}

int rl_uring_used_opcode_supported(int i) {
    if (i < 0 || i >= rl_uring_used_opcode_count()) return -EINVAL;
    struct io_uring ring;
    int r = io_uring_queue_init(4, &ring, 0);
    if (r < 0) return r;
    struct io_uring_probe *probe = io_uring_get_probe_ring(&ring);
    int supported = probe ? io_uring_opcode_supported(probe, rl_used_opcodes[i].opcode) : -ENOSYS;
    if (probe) io_uring_free_probe(probe);
    io_uring_queue_exit(&ring);
    return supported;
}
