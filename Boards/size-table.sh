#!/bin/sh
# Where the bytes of a cross-built program go, by symbol group (`make sizes`):
#   Boards/size-table.sh <unstripped binary> <stripped binary> [<unstripped> <stripped> ...]
# prints, per binary, a table of the bytes each group's functions and data take and
# what is left (string literals, ELF and dynamic-linking tables, unwind tables,
# padding). A symbol's group comes from the source file the debug information names
# (the cross build compiles with -g; the stripped copy is the one measured):
#   Sources/Ringlet/<Folder>/   scheduler, queues, manager, timers, configuration and
#                              board selection, ... by folder
#   Sources/CRinglet, System/  the OS boundary
#   Sources/Ringlet{Demo,Checks} the program
# Symbols the compiler made (specialised generics, outlined copies) are given to the
# type their name starts with, or to the standard library; liburing and the C library
# by name; OUTLINED_FUNCTION_n is code LLVM's machine outliner shares between functions.
set -eu
cd "$(dirname "$0")/.."

demangle=$(dirname "$(command -v swift)")/swift-demangle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Type name -> group, from the declarations in Sources/Ringlet.
for file in $(find Sources/Ringlet -name '*.swift'); do
    grep -oE '^[[:space:]]*((public|package|internal|private|fileprivate|final|indirect|@[A-Za-z_]+)[[:space:]]+)*(class|struct|enum|protocol|actor)[[:space:]]+[A-Za-z_][A-Za-z0-9_]*' "$file" \
        | awk -v path="$file" '{ print $NF "\t" path }'
done > "$work/types"

while [ $# -ge 2 ]; do
    unstripped=$1 stripped=$2
    shift 2
    tools=$(file "$unstripped" | grep -q aarch64 && echo aarch64-linux-gnu- || echo x86_64-linux-gnu-)
    # Each address once (the C library and lld's --icf=all give one function several
    # names), and no .bss or .tbss symbol (b, B): those take memory, not file bytes.
    ${tools}nm -n -S -t d --defined-only "$unstripped" | awk 'NF == 4 && $3 !~ /^[bB]$/ && !seen[$1]++' > "$work/symbols"
    awk '{ printf "0x%x\n", $1 }' "$work/symbols" | ${tools}addr2line -e "$unstripped" > "$work/files"
    awk '{ print $4 }' "$work/symbols" | "$demangle" --simplified > "$work/names"
    paste "$work/symbols" "$work/files" "$work/names" | awk -F'\t' -v types="$work/types" '
        BEGIN {
            while ((getline line < types) > 0) { split(line, f, "\t"); if (!(f[1] in typefile)) typefile[f[1]] = f[2] }
            label["Scheduler"] = "scheduler (Scheduler/)"; label["Queues"] = "queues (Queues/)"
            label["Manager"] = "manager (Manager/)"; label["Timers"] = "timers (Timers/)"
            label["Work"] = "work items, groups, semaphores (Work/)"; label["Source"] = "dispatch sources (Source/)"
            label["IO"] = "DispatchIO, DispatchData (IO/)"; label["QoS"] = "QoS (QoS/)"; label["Time"] = "time (Time/)"
            label["Runtime"] = "runtime start, statistics, messages (Runtime/)"
            label["Configuration"] = "configuration and board selection (Configuration/)"
            label["System"] = "OS boundary (System/, Sources/CRinglet)"; label["Concurrency"] = "Swift concurrency (Concurrency/)"
        }
        function group_of_path(path,    rel, folder, name) {
            if (path ~ /\/Sources\/CRinglet\//) return label["System"]
            if (path ~ /\/Sources\/Ringlet(Demo|Checks)\// || path ~ /^Sources\/Ringlet(Demo|Checks)\//) return "the program itself"
            if (path !~ /Sources\/Ringlet\//) return ""
            rel = path; sub(/.*Sources\/Ringlet\//, "", rel)
            folder = rel; sub(/\/.*/, "", folder); name = rel; sub(/.*\//, "", name)
            return (folder in label) ? label[folder] : folder
        }
        {
            split($1, s, " "); size = s[2] + 0; kind = s[3]; raw = s[4]
            path = $2; sub(/:[0-9?]*( \(discriminator [0-9]+\))?$/, "", path)
            name = $3
            # The outliner gives its functions the debug location of one of their users.
            group = raw ~ /^OUTLINED_FUNCTION_/ ? "code shared by the machine outliner" : group_of_path(path)
            if (group == "") {
                if (raw ~ /^_*io_uring/) group = "liburing"
                else if (raw ~ /^rl_/) group = label["System"]
                else if (raw ~ /^\$[es]/) {
                    t = name
                    while (sub(/^(specialized |generic specialization <[^>]*> of |outlined |init with copy of |init with take of |assign with copy of |assign with take of |destroy of |copy of |retain of |release of |consume of |merged |closure #[0-9]+ (\([^)]*\) )?in |implicit closure #[0-9]+ in |partial apply for |one-time initialization function for |static |type metadata for |type metadata accessor for |value witness table for |full type metadata for |nominal type descriptor for |protocol witness table for |protocol witness for |reabstraction thunk helper from |thunk for |\(extension in [A-Za-z]+\):|Ringlet\.|@[a-z_]+ |\()/, "", t)) {}
                    match(t, /^[A-Za-z_][A-Za-z0-9_]*/)
                    first = substr(t, RSTART, RLENGTH)
                    group = (first in typefile) ? group_of_path(typefile[first]) : "Swift standard library"
                } else group = "C library and start-up code"
            }
            bytes[group] += size; total += size
        }
        END { for (g in bytes) printf "%d\t%s\n", bytes[g], g; printf "%d\t(named total)\n", total }
    ' | sort -rn > "$work/groups"
    file_bytes=$(stat -c %s "$stripped")
    named=$(awk -F'\t' '$2 == "(named total)" { print $1 }' "$work/groups")
    echo "$(basename "$stripped"): $file_bytes bytes stripped"
    echo
    echo "| group | bytes | share |"
    echo "|---|---:|---:|"
    awk -F'\t' -v total="$file_bytes" '$2 != "(named total)" { printf "| %s | %d | %.1f%% |\n", $2, $1, 100 * $1 / total }' "$work/groups"
    awk -v rest=$((file_bytes - named)) -v total="$file_bytes" 'BEGIN {
        printf "| unnamed: string literals, ELF and dynamic-linking tables, unwind tables, padding | %d | %.1f%% |\n", rest, 100 * rest / total }'
    echo
done
