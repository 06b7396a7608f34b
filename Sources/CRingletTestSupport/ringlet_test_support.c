// ringlet_test_support.c — the helpers of ringlet_test_support.h.
#include "ringlet_test_support.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long long rl_fd_read(int fd, void *buffer, unsigned long long length) {
    for (;;) {
        ssize_t n = read(fd, buffer, (size_t)length);
        if (n >= 0) return n;
        if (errno != EINTR) return -errno;
    }
}

long long rl_fd_write(int fd, const void *buffer, unsigned long long length) {
    for (;;) {
        ssize_t n = write(fd, buffer, (size_t)length);
        if (n >= 0) return n;
        if (errno != EINTR) return -errno;
    }
}

int rl_pipe(int fds[2], int nonblocking) {
    return pipe2(fds, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0)) < 0 ? -errno : 0;
}

int rl_unlink(const char *path) { return unlink(path) < 0 ? -errno : 0; }

int rl_process_spawn_exit(int status, long long delay_ns) {
    pid_t pid = fork();
    if (pid < 0) return -errno;
    if (pid == 0) {
        if (delay_ns > 0) {
            struct timespec ts = { .tv_sec = delay_ns / 1000000000LL, .tv_nsec = delay_ns % 1000000000LL };
            while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
        }
        _exit(status);
    }
    return pid;
}

int rl_process_spawn_program(const char *path, const char *argument) {
    pid_t pid = fork();
    if (pid < 0) return -errno;
    if (pid == 0) {
        char *const argv[] = { (char *)path, (char *)argument, NULL };
        execv(path, argv);
        _exit(127);
    }
    return pid;
}

long long rl_self_executable(char *buffer, unsigned long long size) {
    ssize_t length = readlink("/proc/self/exe", buffer, size);
    return length < 0 ? -errno : (long long)length;
}

int rl_process_reap(int pid) {
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, 0);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r < 0 && errno != EINTR) return -errno;
    }
}

int rl_signal_send(int signo) { return kill(getpid(), signo) < 0 ? -errno : 0; }

int rl_signal_send_thread(int tid, int signo) {
    return syscall(SYS_tgkill, getpid(), tid, signo) < 0 ? -errno : 0;
}

int rl_signal_block_in_thread(int signo, int block) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signo);
    int r = pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
    return -r;
}

void rl_sleep_ns(long long ns) {
    struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000LL), .tv_nsec = (long)(ns % 1000000000LL) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}
