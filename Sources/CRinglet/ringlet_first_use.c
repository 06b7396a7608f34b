// ringlet_first_use.c — how the runtime reaches what only a program that lets the
// environment choose needs (board selection, RINGLET_TRACE), so that a program that
// starts the runtime itself can leave it out.
//
// Board selection (the built-in profiles, the profile parser, detection: a good part
// of an aarch64 program) is needed only when the runtime starts on first use, with
// the board RINGLET_BOARD names or detection finds. Whether a program ever does so
// depends on the order of its calls, which the linker cannot see, so the one call
// from the runtime into selection goes through rl_first_use_board, defined here
// weak. A program that always calls Runtime.start(configuration:) first may link the
// same file compiled with -DRINGLET_EXPLICIT_START, whose strong definition replaces
// this one: nothing then references selection, and --gc-sections drops all of it
// (`make cross` links the demo so; the BoardProfiles article, "What a program carries").
//
// RINGLET_TRACE, which turns the trace recorder on from the environment, is reached the
// same way (rl_environment_trace): the recorder and its file writer are
// linked then only through it, or by a program that names a trace file in its own
// configuration (Runtime/OptionalParts.swift). A program linked for an explicit start
// configures the runtime itself, so it reads neither RINGLET_BOARD nor RINGLET_TRACE.
#include "ringlet.h"

#ifndef RINGLET_EXPLICIT_START

/// Board selection on the Swift side (Configuration/BoardSelection+FirstUse.swift): the
/// chosen profile, retained, or 0 for the derived configuration.
void *ringlet_board_for_first_use(void);

__attribute__((weak)) int rl_first_use_board(void **profile) {
    *profile = ringlet_board_for_first_use();
    return 1;
}

/// Links the trace recorder's start (Swift: System/EnvironmentTrace.swift).
void ringlet_link_trace(void);

__attribute__((weak)) int rl_environment_trace(void) {
    ringlet_link_trace();
    return 1;
}

#else

int rl_first_use_board(void **profile) {
    *profile = 0;
    return 0;
}

int rl_environment_trace(void) {
    return 0;
}

#endif
