// ringlet_process.c — stderr, abort, environment and sleep: process-level helpers.
#include "ringlet.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
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

const char *rl_getenv(const char *name) { return getenv(name); }

void *rl_reserve_memory(unsigned long long bytes) { return malloc((size_t)bytes); }

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
