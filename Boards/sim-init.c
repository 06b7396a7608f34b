// sim-init.c — /init of the emulated board's initramfs (`make sim`).
//
// Mounts /proc, /sys and /dev (the runtime reads /proc/self/task for its statistics),
// takes /dev/console as stdin/stdout/stderr, runs /ringlet-checks and then
// /ringlet-demo, reports each exit status and the demo's memory, and powers the
// machine off (qemu runs with -no-reboot and exits). The Makefile greps these lines:
//   sim: <program> exited with status <n>
//   sim: ringlet-demo peak RSS <n> kB, idle RSS <n> kB
// Build: aarch64-linux-gnu-gcc -static -Os -o init sim-init.c
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/// Mounts a pseudo file system; a failure is reported, not fatal (the programs cope).
static void mount_pseudo(const char *type, const char *target) {
    mkdir(target, 0755);
    if (mount(type, target, type, 0, NULL) != 0 && errno != EBUSY)
        printf("sim: mount %s on %s: %s\n", type, target, strerror(errno));
}

/// The kB value of `key` ("Rss:") in /proc/<pid>/<file>, or -1.
static long proc_kilobytes(pid_t pid, const char *file_name, const char *key) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file_name);
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    long value = -1;
    while (fgets(line, sizeof line, file))
        if (strncmp(line, key, strlen(key)) == 0) { value = strtol(line + strlen(key), NULL, 10); break; }
    fclose(file);
    return value;
}

/// 1 when the process `pid` has begun to exit (PF_EXITING in /proc/<pid>/stat, set by
/// do_exit() before the address space is torn down), or cannot be read; else 0.
static int is_exiting(pid_t pid) {
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *file = fopen(path, "r");
    if (!file) return 1;
    char *read = fgets(line, sizeof line, file);
    fclose(file);
    char *fields = read ? strrchr(line, ')') : NULL;  // the name may hold spaces
    unsigned int flags = 0;
    if (!fields || sscanf(fields + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) != 1) return 1;
    return (flags & 0x4) != 0;  // PF_EXITING, include/linux/sched.h
}

/// Runs `path` and returns its exit status (128 + signal when killed). With
/// `watch_memory`, samples its resident memory every 20 ms and reports the last sample
/// taken before it began to exit (inside the 300 ms the demo idles at its end; samples
/// during exit see the address space being torn down), and wait4's ru_maxrss, its peak
/// (VmHWM, synced at exit). Samples are `Rss:` of smaps_rollup, counted from the page
/// tables: status's VmRSS lags by up to 64 pages per thread (SPLIT_RSS_COUNTING,
/// mm/memory.c in 6.1) and read 4 kB for the idle demo.
static int run(const char *path, int watch_memory) {
    char *argv[] = { (char *)path, NULL };
    // The kernel hands init the command line's unknown NAME=value words as its
    // environment (Documentation/admin-guide/kernel-parameters.rst): the Makefile puts
    // RINGLET_BOARD=<board> there, so the programs run with the emulated board's profile.
    static char board[128] = "RINGLET_BOARD=";
    const char *chosen = getenv("RINGLET_BOARD");
    char *envp[] = { "PATH=/", "HOME=/", chosen ? board : NULL, NULL };
    if (chosen) snprintf(board, sizeof board, "RINGLET_BOARD=%s", chosen);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { printf("sim: fork: %s\n", strerror(errno)); return 127; }
    if (pid == 0) {
        execve(path, argv, envp);
        printf("sim: exec %s: %s\n", path, strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    long idle = -1;
    for (;;) {
        pid_t done = wait4(pid, &status, watch_memory ? WNOHANG : 0, &usage);
        if (done == pid) break;
        if (done < 0 && errno != EINTR) { printf("sim: wait4: %s\n", strerror(errno)); return 127; }
        if (watch_memory) {
            // Read the flag after the RSS: not exiting then means not exiting at the read.
            long rss = proc_kilobytes(pid, "smaps_rollup", "Rss:");
            if (rss > 0 && !is_exiting(pid)) idle = rss;
            usleep(20 * 1000);
        }
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    printf("sim: %s exited with status %d\n", path + 1, code);
    if (watch_memory)
        printf("sim: %s peak RSS %ld kB, idle RSS %ld kB\n", path + 1, usage.ru_maxrss, idle);
    return code;
}

int main(void) {
    mount_pseudo("devtmpfs", "/dev");
    int console = open("/dev/console", O_RDWR);
    if (console >= 0) { dup2(console, 0); dup2(console, 1); dup2(console, 2); if (console > 2) close(console); }
    setvbuf(stdout, NULL, _IOLBF, 0);
    mount_pseudo("proc", "/proc");
    mount_pseudo("sysfs", "/sys");
    printf("sim: %ld CPUs online, %ld MB of memory\n", sysconf(_SC_NPROCESSORS_ONLN),
           sysconf(_SC_PHYS_PAGES) * (sysconf(_SC_PAGESIZE) / 1024) / 1024);
    run("/ringlet-checks", 0);
    run("/ringlet-demo", 1);
    run("/ringlet-demo-dynamic", 1);  // the dynamically linked build, on /lib's glibc
    printf("sim: powering off\n");
    fflush(stdout);
    sync();
    reboot(RB_POWER_OFF);
    return 0;  // not reached; were it, the kernel panics and panic=-1 ends qemu
}
