// no-io-uring — runs a command the way a container's default seccomp profile would:
// io_uring_setup, io_uring_enter and io_uring_register fail with EPERM. `make
// unit-no-io-uring` runs the test suite under it, so the runtime's fallback to epoll
// (Architecture, "The epoll backend") is tested against a real refusal, not an
// injected one. Linux only; the filter is inherited by every child process.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define RL_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define RL_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "no-io-uring: add this architecture's AUDIT_ARCH_*"
#endif

#define REFUSE(nr) \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s command [argument...]: runs the command with io_uring refused (EPERM)\n", argv[0]);
        return 2;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RL_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        REFUSE(__NR_io_uring_setup),
        REFUSE(__NR_io_uring_enter),
        REFUSE(__NR_io_uring_register),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = { .len = sizeof filter / sizeof filter[0], .filter = filter };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        fprintf(stderr, "no-io-uring: cannot install the seccomp filter: %s\n", strerror(errno));
        return 1;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "no-io-uring: cannot run %s: %s\n", argv[1], strerror(errno));
    return 127;
}
