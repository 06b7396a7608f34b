// ringlet_executors.c — Ringlet becomes Swift concurrency's executor when the program
// is loaded, before main: an `async main` binds its first task to the main executor
// before any line of it runs, so installing at the runtime's start was too late for it
// (Concurrency/RingletExecutorFactory.swift, the Concurrency article).
//
// The constructor only calls `_createExecutors(factory:)` through the Swift side; no
// thread starts until the first job or queue needs the runtime. The Swift side is
// declared weak: builds without the toolchain's executor hooks (Embedded Swift, Swift
// before 6.3) have none, and nothing happens.
//
// A program keeps the toolchain's executors by saying so before main, either way:
// - RINGLET_SWIFT_CONCURRENCY=toolchain in the environment (`ringlet bench` gives it to
//   the child that measures the toolchain's side);
// - a symbol `ringlet_keep_toolchain_executors` it defines, for example
//   `@_cdecl("ringlet_keep_toolchain_executors") func keepToolchainExecutors() {}`
//   (the project's test bundle does: many of its tests count and hold pool threads).
#include "ringlet.h"
#include <stdlib.h>
#include <string.h>

/// Calls `_createExecutors(factory:)` (Swift, RingletExecutorFactory.swift).
__attribute__((weak)) void ringlet_install_executors_at_load(void);

/// Defined by a program that keeps the toolchain's executors.
__attribute__((weak)) void ringlet_keep_toolchain_executors(void);

static int rl_executors_state = RL_EXECUTORS_NOT_AVAILABLE;

__attribute__((constructor)) static void rl_install_executors_before_main(void) {
    if (!ringlet_install_executors_at_load) return;
    const char *asked = getenv("RINGLET_SWIFT_CONCURRENCY");
    if (asked && strcmp(asked, "toolchain") == 0) {
        rl_executors_state = RL_EXECUTORS_KEPT_BY_ENVIRONMENT;
        return;
    }
    if (asked && *asked && strcmp(asked, "ringlet") != 0) {
        rl_executors_state = RL_EXECUTORS_BAD_ENVIRONMENT;
        return;
    }
    if (ringlet_keep_toolchain_executors) {
        rl_executors_state = RL_EXECUTORS_KEPT_BY_SYMBOL;
        return;
    }
    ringlet_install_executors_at_load();
    rl_executors_state = RL_EXECUTORS_INSTALLED;
}

int rl_executors_at_load(void) { return rl_executors_state; }
