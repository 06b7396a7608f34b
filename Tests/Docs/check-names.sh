#!/bin/sh
# The documentation names only what exists (`make docs`, in `make test`):
#   Tests/Docs/check-names.sh [file.md ...]
# reads the inline code spans of the README, Boards/README.md and the DocC articles
# (fenced blocks are left out: they show program text and output) and fails, listing
# file:line and the name, for
# - a path (a span with a slash, or ending in a source or data extension) that names no
#   file or folder of the repository: it is looked for from the top, from Sources/,
#   Sources/Ringlet/, Tests/ and Tests/RingletTests/, and a bare file name anywhere;
#   `<...>` and `*` are wildcards, absolute paths (/proc, /sys) are the machine's;
# - a Swift name (`Type`, `Type.member`, `member`, `.case`, `member(_:)`): a type or a
#   lowerCamelCase name with a capital in it must be declared in Sources/ (as a type,
#   function, property, case or parameter label), and every part of a dotted name must
#   occur there; names of the standard library, Foundation and the C library that the
#   articles quote are listed in EXTERNAL below.
# DocC checks its own ``symbol`` and <doc:Article> links (--warnings-as-errors).
set -eu
cd "$(dirname "$0")/../.."

EXTERNAL=' Task Task.sleep Task.yield MainActor TaskGroup UnownedJob ExecutorJob SerialExecutor TaskExecutor
 SchedulingExecutor withTaskExecutorPreference assumeIsolated CancellationError AsyncIteratorProtocol
 ExperimentalCustomExecutors ExperimentalScheduling Unmanaged Synchronization Atomic Mutex
 Thread RunLoop RunLoop.main XCTestExpectation XCTest Foundation FoundationEssentials Dispatch Glibc
 OperationQueue OperationQueue.underlyingQueue URLSession FileHandle readabilityHandler writeabilityHandler
 libBlocksRuntime recordedEvents AsyncSequence Data withTaskGroup XPCListener XPCSession Codable Encodable Decodable JSONEncoder
 NIOCore NIOPosix NIOHTTP1 EventLoopGroup Channel ByteBuffer IOError NIOAsyncChannel NIOSerialEventLoopExecutor
 MultiThreadedEventLoopGroup ServerBootstrap ChannelError.alreadyClosed ChannelError.operationUnsupported
 ChannelOptions.writeBufferWaterMark writeBufferWaterMark channelUnregistered socketOption tcpOption
 Hummingbird Application Service ServiceGroup '
EXTERNAL=" $(echo $EXTERNAL) "

files=${*:-"README.md Boards/README.md $(ls Sources/Ringlet/Ringlet.docc/*.md)"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every declared Swift name of the sources and tests: types, functions, properties,
# cases, labels.
find Sources Tests -name '*.swift' -exec cat {} + \
  | grep -oE '(class|struct|enum|protocol|actor|typealias|extension|func|var|let|case|associatedtype)[[:space:]]+`?[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*[[:space:]]*:|case[[:space:]]+[a-z][A-Za-z0-9_]*(,[[:space:]]*[a-z][A-Za-z0-9_]*)*' \
  | tr -d '`:' | tr ',' '\n' | awk '{ print $NF }' > "$work/declared-names"
# ... and the modules: a folder of Sources/ is a target's name.
{ cat "$work/declared-names"; ls Sources; } | sort -u > "$work/declared"
# Every word of the sources and tests, comments included; and the repository's files.
find Sources Tests -name '*.swift' -o -name '*.c' -o -name '*.h' | xargs cat \
  | grep -oE '[A-Za-z_][A-Za-z0-9_]*' | sort -u > "$work/words"
git ls-files --cached --others --exclude-standard > "$work/files" 2>/dev/null || find . -path ./.build -prune -o -type f -print | sed 's|^\./||' > "$work/files"
awk -F/ '{ p = ""; for (i = 1; i < NF; i++) { p = p (i > 1 ? "/" : "") $i; print p } }' "$work/files" | sort -u > "$work/dirs"

# file:line<TAB>span, outside fenced blocks and DocC's ``symbol`` links.
for f in $files; do
    awk -v f="$f" '/^[[:space:]]*```/ { fence = !fence; next } fence { next }
      { line = $0; gsub(/``[^`]+``/, "", line)
        while (match(line, /`[^`]+`/)) { print f ":" NR "\t" substr(line, RSTART + 1, RLENGTH - 2); line = substr(line, RSTART + RLENGTH) } }' "$f"
done > "$work/spans"

exists_path() { # a path, with <...> and * as wildcards, from any of the roots
    pattern=$(printf '%s' "$1" | sed -E 's/<[^>]*>/*/g; s|/$||; s/([.+])/\\\1/g; s/\*/[^\/]*/g')
    for root in '' 'Sources/' 'Sources/Ringlet/' 'Tests/' 'Tests/RingletTests/'; do
        grep -qE "^$root$pattern\$" "$work/files" "$work/dirs" && return 0
    done
    grep -qE "(^|/)$pattern\$" "$work/files" "$work/dirs"
}
is_word() { grep -qx -- "$1" "$work/words"; }
is_declared() { grep -qx -- "$1" "$work/declared"; }
is_external() { case "$EXTERNAL" in *" $1 "*) return 0 ;; esac; return 1; }

status=0
while IFS='	' read -r where span; do
    case $span in
        *' '* | *'://'* | /* | *'$'* | -* | .*) continue ;;    # commands, URLs, the machine's paths, variables, flags
    esac
    case $span in
        */* | *[!.].swift | *[!.].c | *[!.].h | *[!.].md | *[!.].sh | *[!.].profile | *[!.].ld | *[!.].supp | *[!.].svg)
            case $span in *.*.*) [ -z "${span##*/*}" ] || continue ;; esac    # Type.member.profile is a name
            exists_path "$span" || { echo "$where: \`$span\` names no file or folder of the repository"; status=1; }
            continue ;;
    esac
    # Swift names: Type, Type.member, .case, member(_:), member; keep the name part.
    name=$(printf '%s' "$span" | sed -E 's/\(.*\)$//; s/^\.//')
    printf '%s' "$name" | grep -qE '^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$' || continue
    is_external "$name" && continue
    last=${name##*.}
    # Only names that read as Swift: a capitalised type, or lowerCamelCase with a capital.
    printf '%s' "$last" | grep -qE '^[A-Z][a-z]+[A-Za-z0-9]*$|^[a-z]+[A-Z][A-Za-z0-9]*$|^[A-Z][A-Z]+[a-z]+[A-Za-z0-9]*$' || continue
    missing=''
    for part in $(printf '%s' "$name" | tr '.' ' '); do
        is_word "$part" || is_external "$part" || missing="$missing $part"
    done
    is_declared "$last" || is_external "$last" || missing="$missing $last(not declared)"
    [ -z "$missing" ] || { echo "$where: \`$span\`: no such name in Sources/:$missing"; status=1; }
done < "$work/spans"

# The README's Layout block against the tree: each folder it names exists (an indented
# name is under Sources/Ringlet/), and it names every folder of Sources/, Sources/Ringlet/
# and Tests/. The tests mirror the runtime: each folder of Tests/RingletTests/ but
# Support/ is a folder of Sources/Ringlet/.
awk '/^## Layout/ { on = 1 } on && /^```/ { if (block) exit; block = 1; next } block' README.md \
  | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[A-Za-z][A-Za-z0-9._\/]*\/$/) {
        n = $i; if (n !~ /^(Sources|Tests|Boards)\// && n != "Boards/") n = "Sources/Ringlet/" n; sub(/\/$/, "", n); print n } }' \
  | sort -u > "$work/layout"
while read -r folder; do
    [ -d "$folder" ] || { echo "README.md, Layout: $folder/ is not a folder of the repository"; status=1; }
done < "$work/layout"
for folder in $(find Sources Sources/Ringlet Tests -mindepth 1 -maxdepth 1 -type d | sort -u); do
    grep -qx "$folder" "$work/layout" || { echo "README.md, Layout: $folder/ is missing"; status=1; }
done
for folder in $(find Tests/RingletTests -mindepth 1 -maxdepth 1 -type d ! -name Support); do
    [ -d "Sources/Ringlet/${folder#Tests/RingletTests/}" ] \
      || { echo "$folder/: the tests mirror Sources/Ringlet/, which has no ${folder#Tests/RingletTests/}/"; status=1; }
done

[ $status = 0 ] && echo "docs: every path and Swift name the documentation quotes exists ($(wc -l < "$work/spans") code spans in $(echo $files | wc -w) files)"
exit $status
