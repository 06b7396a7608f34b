// ringlet_process.c — stderr, abort, environment and sleep: process-level helpers.
#include "ringlet.h"

#include <errno.h>
#include <stdlib.h>
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

void rl_sleep_ns(long long ns) {
    struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000LL), .tv_nsec = (long)(ns % 1000000000LL) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}
