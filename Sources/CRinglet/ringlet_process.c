// ringlet_process.c — stderr, abort, environment, errno names and sleep: process-level helpers.
#include "ringlet.h"
#include "ringlet_internal.h"

#include <errno.h>
#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void rl_write_stderr(const char *bytes, long long count) {
    while (count > 0) {
        ssize_t n = write(2, bytes, (size_t)count);
        if (n < 0) {
            if (errno == EINTR) continue;
            return;
        }
        bytes += n;
        count -= n;
    }
}

void rl_abort(void) { abort(); }

void rl_exit(int status) { exit(status); }

int rl_at_exit(void (*hook)(void)) { return atexit(hook) == 0 ? 0 : -ENOMEM; }

const char *rl_getenv(const char *name) { return getenv(name); }

// The C library's own table (glibc 2.32 or later), so the runtime carries none.
const char *rl_errno_name(int value) { return value > 0 ? strerrorname_np(value) : 0; }

const char *rl_decimal(char digits[21], long long value) {
    unsigned long long magnitude = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
    char *cursor = digits + 20;
    *cursor = 0;
    do {
        *--cursor = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (value < 0) *--cursor = '-';
    return cursor;
}

void rl_join(char *out, unsigned long capacity, const char *a, const char *b, const char *c) {
    const char *parts[3] = {a, b, c};
    unsigned long used = 0;
    for (int i = 0; i < 3; i++) {
        for (const char *p = parts[i]; *p && used + 1 < capacity; p++) out[used++] = *p;
    }
    if (capacity) out[used] = 0;
}

// The pool is touched a node at a time, from its start: with transparent huge pages
// ("always", as on Debian's kernels) the first touch past a 2 MiB boundary could make a
// whole huge page resident, so that an idle program's resident memory (the emulated
// Orange Pi 5's demo) changed from run to run by whole huge pages. So the whole pages
// of a reservation of 2 MiB or more are marked MADV_NOHUGEPAGE; a kernel without THP
// refuses, which changes nothing.
// A reservation of 2 MiB or more is a mapping of its own, marked MADV_NOHUGEPAGE. Not
// malloc's: glibc's mmap threshold grows after large blocks are freed (up to 32 MiB), so
// a large malloc may come from an arena's heap, and the mark would stay on that heap
// after the pool is freed, on whatever the program allocates there next.
//
// LeakSanitizer scans the heap and the roots for pointers, not a mapping: what only the
// work-node pool refers to (a queued closure) would be reported as leaked. So a mapping
// is registered as a root when the sanitizer is linked (a weak symbol, absent otherwise).
extern void __lsan_register_root_region(const void *p, size_t size) __attribute__((weak));
extern void __lsan_unregister_root_region(const void *p, size_t size) __attribute__((weak));

void *rl_reserve_memory(unsigned long long bytes) {
    if (bytes < (2ULL << 20)) return malloc((size_t)bytes);
    void *memory = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return NULL;
#ifdef MADV_NOHUGEPAGE
    (void)madvise(memory, (size_t)bytes, MADV_NOHUGEPAGE);
#endif
    if (__lsan_register_root_region) __lsan_register_root_region(memory, (size_t)bytes);
    return memory;
}

void rl_release_memory(void *memory, unsigned long long bytes) {
    if (!memory) return;
    if (bytes < (2ULL << 20)) {
        free(memory);
        return;
    }
    if (__lsan_unregister_root_region) __lsan_unregister_root_region(memory, (size_t)bytes);
    munmap(memory, (size_t)bytes);
}

int rl_malloc_arena_max(int arenas) {
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
    return arenas > 0 && mallopt(M_ARENA_MAX, arenas) == 1;
#else
    (void)arenas;
    return 0;
#endif
}

long long rl_address_space_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
    return (long long)limit.rlim_cur;
}

// The child of a fork(2) has only the forking thread: the runtime's workers, manager
// and ring stay in the parent. The handler marks the child so that Ringlet's entry
// points trap with a message instead of waiting forever for threads that do not exist.
int rl_forked_child_flag = 0;
static int fork_guard_parent = 0;
static pthread_once_t fork_guard_once = PTHREAD_ONCE_INIT;

static void fork_guard_child(void) { __atomic_store_n(&rl_forked_child_flag, 1, __ATOMIC_RELAXED); }

static void fork_guard_register(void) {
    fork_guard_parent = (int)getpid();
    pthread_atfork(0, 0, fork_guard_child);
}

void rl_fork_guard_install(void) { pthread_once(&fork_guard_once, fork_guard_register); }

int rl_fork_guard_parent(void) { return fork_guard_parent; }

int rl_write_file_replacing(const char *path, const char *bytes, long long count) {
    char temporary[4096];
    size_t length = strlen(path);
    if (length + 5 > sizeof temporary) return -ENAMETOOLONG;
    memcpy(temporary, path, length);
    memcpy(temporary + length, ".tmp", 5);
    // A stale temporary (or a symlink planted there) goes; O_EXCL|O_NOFOLLOW then
    // refuses to write through anything that appears meanwhile.
    unlink(temporary);
    int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return -errno;
    while (count > 0) {
        ssize_t n = write(fd, bytes, (size_t)count);
        if (n < 0) {
            if (errno == EINTR) continue;
            int error = errno;
            close(fd);
            unlink(temporary);
            return -error;
        }
        bytes += n;
        count -= n;
    }
    close(fd);
    if (rename(temporary, path) != 0) {
        int error = errno;
        unlink(temporary);
        return -error;
    }
    return 0;
}
