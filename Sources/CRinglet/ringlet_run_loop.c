// ringlet_run_loop.c — how the runtime reaches the run-loop bridge of
// RingletFoundationCompat (RunLoopBridge.swift) without depending on it: the bridge's
// start is declared weak here, so a program that does not link RingletFoundationCompat
// (a board's program, the Embedded builds) has none and the call does nothing.
#include "ringlet.h"

/// Defined by RingletFoundationCompat when the program links it.
__attribute__((weak)) void ringlet_run_loop_bridge_start(void);

int rl_run_loop_bridge_start(void) {
    if (!ringlet_run_loop_bridge_start) return 0;
    ringlet_run_loop_bridge_start();
    return 1;
}
