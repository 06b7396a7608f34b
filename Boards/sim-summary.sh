#!/bin/sh
# One row of `make sim-all`'s table, from what `make sim` left in its run folder:
#   Boards/sim-summary.sh <board> <run folder> <cross build folder> "<cpu ×n, memory>"
#   Boards/sim-summary.sh --header
# The run folder holds sim.log (what the emulated board printed, see Boards/sim-init.c),
# seconds (qemu's wall time) and kernel-package; the cross build folder the programs.
set -eu

if [ "${1:-}" = --header ]; then
    echo "| board | emulated machine | kernel | checks | demo, dynamic | demo, static-pie | static demo RSS, peak / idle | /init reached / powered off |"
    echo "|---|---|---|---|---:|---:|---:|---:|"
    exit 0
fi

board=$1 run=$2 build=$3 shape=$4
log=$run/sim.log
field() { sed -n "$1" "$log" 2>/dev/null | head -1; }

# Unanchored: on x86-64 the firmware's escape codes precede the first line on the console.
release=$(field 's/^.*sim: kernel \([^ ]*\) .*/\1/p')
rt=$(grep -q 'sim: kernel .*PREEMPT_RT' "$log" 2>/dev/null && echo ", PREEMPT_RT" || true)
page=$(field 's/^sim: \([0-9]*\)-byte pages.*/\1/p')
capacities=$(field 's/.*cpu_capacity \([0-9,]*\)$/\1/p')
# Show the capacities only where they differ (big.LITTLE).
distinct=$(echo "$capacities" | tr ',' '\n' | sort -u | grep -c . || true)
[ "$distinct" -gt 1 ] && shape="$shape, cpu_capacity $capacities"
checks=$(field 's/^\([0-9]* passed, [0-9]* failed\)$/\1/p')
[ -n "$checks" ] || checks="no summary (did not finish)"
peak=$(field 's/^sim: ringlet-demo peak RSS \([0-9-]*\) kB.*/\1/p')
idle=$(field 's/^sim: ringlet-demo peak RSS .* idle RSS \([0-9-]*\) kB/\1/p')
reached=$(field 's/^sim: \/init started \([0-9.]*\) s.*/\1/p')
seconds=$(cat "$run/seconds" 2>/dev/null || echo "?")
size() { stat -c %s "$1" 2>/dev/null | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }

echo "| $board | $shape | ${release:-?} (${page:-?}-byte pages$rt) | $checks | $(size "$build/RingletDemo-dynamic") B" \
    "| $(size "$build/RingletDemo-static-pie") B | ${peak:-?} / ${idle:-?} kB | ${reached:-?} s / $seconds s |"
