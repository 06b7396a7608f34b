#!/bin/sh
# The C library's part of the symbol ordering for the cross build's static-pie programs
# (`make cross`; Boards/traced-order.sh puts the functions that ran in front of it):
#   Boards/static-order.sh <binutils prefix> <archive> [<archive> ...] > order.txt
# prints the global symbols of every member of the given archives (the C library,
# libgcc, liburing) except the members below, which a static program links only
# because glibc's own error paths reach them — printf and its multi-precision
# arithmetic, gettext, locale loading, gconv, wide-character streams, dlopen, the
# resolver, the unwinder — and which the runtime never runs. lld places the listed
# symbols' sections first, so the code a program runs sits in one block and these
# members in another that is never read (--symbol-ordering-file).
#
# Why it matters: the kernel maps a file's pages around each page fault, 64 KiB at a
# time (fault_around_bytes), so with glibc's layout, in which those members lie among
# the ones that run, the whole static demo was resident. Grouped, about 160 kB of it
# stays on disk: the static demo's idle RSS on the emulated Pi Zero 2 W went from
# 1,100 kB to 940 kB (the BoardProfiles article, "Size"). A member missing from the
# list only costs memory, never behaviour: the order changes nothing but addresses.
set -eu
prefix=$1
shift
cold='^(v?f?w?printf|vfw?printf-internal|printf_fp|printf_fphex|printf-parse|fxprintf|reg-|_?itowa|snprintf'
cold="$cold|vsnprintf|sprintf|vsprintf|asprintf|vasprintf|strops"
cold="$cold|mul_n|mul_1|mul[.]o|divrem|lshift|rshift|submul|addmul|dbl2mpn|ldbl2mpn|mpn|fpioconst|strtod|strtof"
cold="$cold|dcgettext|dcigettext|loadmsgcat|plural|localealias|explodename|finddomain|l10nflist|localename"
cold="$cold|setlocale|findlocale|loadlocale|loadarchive|lc-time|tzset|tzfile"
cold="$cold|gconv|iconv|C-translit|translit"
cold="$cold|wfileops|wgenops|wstrops|iofwide|wcs|wmem|mbrtowc|wcrtomb|mbsrtowcs|wcsrtombs|btowc|wctob|mbsnrtowcs"
cold="$cold|iofopen|iofclose|fopen|fclose|getdelim"
cold="$cold|dl-open|dl-close|dl-profile|dl-libc|dl-sym|dlopen|dlclose|dlsym|dlvsym|dlmopen|dlinfo|dladdr|dlerror"
cold="$cold|libc_dlerror|res_|resolv|inet_|if_index|ifaddrs|getsockname|sendto|recvmsg|netlink"
cold="$cold|unwind|strerror|_strerror|errname|libc_fatal|assert|backtrace|psiginfo|argz|envz|fnmatch|glob|regex)"
for archive in "$@"; do "${prefix}nm" --defined-only "$archive" 2>/dev/null; done | awk -v cold="$cold" '
    /^$/ { next }
    /:$/ { member = substr($0, 1, length($0) - 1); skip = member ~ cold; next }
    # Global symbols and ifunc resolvers only: static functions share names across
    # members, and a cold member would be listed through a hot one of the same name.
    !skip && NF == 3 && $2 ~ /^[TRDWi]$/ { print $3 }'
