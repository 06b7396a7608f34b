#!/bin/sh
# The functions a static program runs, in the order it first runs them, for the front of
# its symbol ordering (`make cross`, after Boards/static-order.sh's list is linked once):
#   Boards/traced-order.sh <qemu-user binary> <cpu> <nm> <program, unstripped> > traced.txt
# runs the program once under qemu's user-mode emulator, which logs each block of code it
# translates with the function it lies in (-d exec), and prints those functions, then the
# ones the board's kernel reaches and the emulator cannot:
#   - the io_uring path (liburing and the C boundary's ring calls): qemu-user has no
#     io_uring, so the traced run is on epoll (RINGLET_BACKEND=epoll);
#   - glibc's lookup of the vDSO's clock functions (qemu-user 7.2 maps no vDSO);
#   - the check whether standard output is a terminal (the board's console is one);
#   - crtbegin's start-up functions, which have no size, so qemu names no block with them.
# Functions the board runs on a path the traced run does not take (placement on a
# profile's cores, a race won the other way) fall among the rest of the Swift code, which
# lld places last, beside .init and .iplt, whose pages the program reads anyway.
# Why it matters: the kernel maps a file's pages 64 KiB around each fault, so code that
# runs spread among code that never runs makes all of it resident. With the functions
# that run in one block (and no unwind tables, Boards/no-unwind-tables.ld), the static
# demo's resident read-only pages on the Pi 5's 16 KiB pages went from 608-640 kB to
# 464-528 kB (the BoardProfiles article, "Size"). A function missing from the list costs
# memory, never behaviour: the order changes nothing but addresses.
set -eu
qemu=$1 cpu=$2 nm=$3 program=$4
log=$(mktemp) out=$(mktemp) ran=$(mktemp)
trap 'rm -f "$log" "$out" "$ran"' EXIT
if ! RINGLET_BACKEND=epoll "$qemu" -cpu "$cpu" -d exec -D "$log" "$program" > "$out" 2>&1; then
    echo "traced-order: $program failed under $qemu:" >&2; cat "$out" >&2; exit 1
fi
# "Trace 0: <host> [<flags>/<pc>/<flags>/<flags>] <function>": the functions that ran,
# printed in the program's own address order, not in the order they first ran, which
# changes with the threads' timing from one build to the next.
awk '/^Trace / && NF == 5 { print $5 }' "$log" | sort -u > "$ran"
"$nm" -n --defined-only "$program" | awk 'NR == FNR { ran[$1] = 1; next } ($3 in ran) && !seen[$3]++ { print $3 }' "$ran" -
"$nm" --defined-only "$program" | awk '
    $3 ~ /^(_*io_uring_|rl_ring_)/ { print $3 }
    $3 ~ /^(_dl_lookup_symbol_x|_dl_lookup_direct|_dl_new_object|_dl_setup_hash|_dl_add_to_namespace_list|strcmp)$/ { print $3 }
    $3 ~ /^(isatty|tcgetattr|frame_dummy)$/ { print $3 }'
